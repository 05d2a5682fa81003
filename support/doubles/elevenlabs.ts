import type { ServerResponse } from 'node:http';
import { split, parseWav, tone } from './audio.ts';
import {
  expectShape,
  formDataOf,
  startHttpDouble,
  type HttpDouble,
  type RecordedRequest,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';
import { scriptedWords, SCRIPT } from '../../shared/domains/agent-tests/simulators/transcript.ts';

/**
 * ElevenLabs: `POST /v1/text-to-speech/{voice}/stream?output_format=pcm_<rate>` (streams PCM) and
 * `POST /v1/speech-to-text` (multipart, Scribe's word list). Auth `xi-api-key`; errors `{detail: {status, message}}`.
 */
export function startElevenLabsDouble(): Promise<HttpDouble> {
  return startHttpDouble({
    name: 'elevenlabs',
    errorBody: (status, message) => ({
      body: JSON.stringify({
        detail: {
          status: status === 401 ? 'invalid_api_key' : status === 429 ? 'too_many_concurrent_requests' : 'error',
          message,
        },
      }),
    }),
    authorize: (req, d) => req.headers['xi-api-key'] === d.key,
    async route(req: RecordedRequest, res: ServerResponse, d: HttpDouble) {
      const tts = /^\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(req.path);
      if (req.method === 'POST' && tts) {
        const body = d.json(req);
        expectShape(typeof body.text === 'string' && body.text.length > 0, 'text');
        expectShape(typeof body.model_id === 'string', 'model_id');
        const fmt = /^pcm_(\d+)$/.exec(req.query.get('output_format') ?? '');
        expectShape(fmt, 'output_format=pcm_<rate>');
        await d.stream(res, split(tone(Number(fmt[1]), 0.3)), 'audio/pcm');
        return true;
      }
      if (req.method === 'POST' && req.path === '/v1/speech-to-text') {
        const form = await formDataOf(req);
        expectShape(typeof form.get('model_id') === 'string', 'model_id');
        const file = form.get('file');
        expectShape(file instanceof Blob, 'file');
        const { sampleRate, pcm } = parseWav(Buffer.from(await file.arrayBuffer()));
        const diarize = form.get('diarize') === 'true';
        const words = scriptedWords(pcm.length / 2 / sampleRate).flatMap((w, i) => [
          ...(i > 0
            ? [{ text: ' ', start: w.start, end: w.start, type: 'spacing', speaker_id: `speaker_${w.speaker}` }]
            : []),
          {
            text: w.word,
            start: w.start,
            end: w.end,
            type: 'word',
            ...(diarize ? { speaker_id: `speaker_${w.speaker}` } : {}),
            logprob: -0.1,
          },
        ]);
        d.sendJson(res, 200, {
          language_code: String(form.get('language_code') ?? 'eng'),
          language_probability: 0.98,
          text: SCRIPT,
          words,
        });
        return true;
      }
      return false;
    },
  });
}
