import { split, tone } from './audio.ts';
import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';

/** Hume Octave: `POST /v0/tts/stream/file` (`X-Hume-Api-Key`), `format: {type: pcm}` streams 48 kHz s16le. */
export function startHumeDouble(): Promise<HttpDouble> {
  return startHttpDouble({
    name: 'hume',
    errorBody: (status, message) => ({ body: JSON.stringify({ message, code: `E${status}` }) }),
    authorize: (req, d) => req.headers['x-hume-api-key'] === d.key,
    async route(req, res, d) {
      if (req.method !== 'POST' || req.path !== '/v0/tts/stream/file') return false;
      const body = d.json(req) as {
        utterances?: { text?: unknown; voice?: Record<string, unknown> }[];
        format?: { type?: unknown };
      };
      expectShape(Array.isArray(body.utterances) && body.utterances.length > 0, 'utterances');
      const u = body.utterances[0]!;
      expectShape(typeof u.text === 'string' && u.text, 'utterances[0].text');
      expectShape(
        u.voice && (typeof u.voice.id === 'string' || typeof u.voice.name === 'string'),
        'utterances[0].voice',
      );
      expectShape(body.format?.type === 'pcm', 'format.type pcm');
      await d.stream(res, split(tone(48000, 0.3)), 'audio/pcm');
      return true;
    },
  });
}
