import { parseWav, split, tone } from './audio.ts';
import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';
import { scriptedWords, SCRIPT } from '../../shared/domains/agent-tests/simulators/transcript.ts';

/**
 * Deepgram REST: Aura `POST /v1/speak?model&encoding=linear16&container=none&sample_rate` (streams linear16) and
 * prerecorded `POST /v1/listen` (WAV body → `{metadata, results: {channels, utterances}}`). Auth
 * `Authorization: Token <key>`; errors `{err_code, err_msg, request_id}`. The live WebSocket double is
 * deepgram-live.ts. `spoken` is what the double "hears" in any upload (default: the English SCRIPT); with
 * `detect_language=true` it reports that language as Deepgram does (`detected_language`), and with `language=`
 * set it answers as if the audio were in the language asked for.
 */
export function startDeepgramDouble(
  spoken: { language: string; text: string } = { language: 'en', text: SCRIPT },
): Promise<HttpDouble> {
  return startHttpDouble({
    name: 'deepgram',
    errorBody: (status, message) => ({
      body: JSON.stringify({
        err_code: status === 401 ? 'INVALID_AUTH' : status === 429 ? 'TOO_MANY_REQUESTS' : 'BAD_REQUEST',
        err_msg: message,
        request_id: 'req-double',
      }),
    }),
    authorize: (req, d) => req.headers.authorization === `Token ${d.key}`,
    async route(req, res, d) {
      if (req.method === 'POST' && req.path === '/v1/speak') {
        expectShape(/^aura-/.test(req.query.get('model') ?? ''), 'model=aura-*');
        expectShape(req.query.get('encoding') === 'linear16', 'encoding=linear16');
        expectShape(req.query.get('container') === 'none', 'container=none');
        const rate = Number(req.query.get('sample_rate'));
        expectShape(rate > 0, 'sample_rate');
        const body = d.json(req);
        expectShape(typeof body.text === 'string' && body.text, 'text');
        await d.stream(res, split(tone(rate, 0.3)), 'audio/l16');
        return true;
      }
      if (req.method === 'POST' && req.path === '/v1/listen') {
        expectShape(String(req.headers['content-type']).startsWith('audio/'), 'audio content-type');
        expectShape(req.query.get('model'), 'model');
        const { sampleRate, pcm } = parseWav(req.body);
        const duration = pcm.length / 2 / sampleRate;
        const diarize = req.query.get('diarize') === 'true';
        const words = scriptedWords(duration, spoken.text).map((w) => ({
          word: w.word,
          start: w.start,
          end: w.end,
          confidence: 0.99,
          punctuated_word: w.word,
          ...(diarize ? { speaker: w.speaker, speaker_confidence: 0.9 } : {}),
        }));
        const half = Math.ceil(words.length / 2);
        const utterances = [words.slice(0, half), words.slice(half)].map((ws, i) => ({
          start: ws[0]!.start,
          end: ws.at(-1)!.end,
          confidence: 0.99,
          channel: 0,
          transcript: ws.map((w) => w.word).join(' '),
          words: ws,
          ...(diarize ? { speaker: i } : {}),
          id: `utt-${i}`,
        }));
        d.sendJson(res, 200, {
          metadata: { request_id: 'req-double', created: new Date().toISOString(), duration, channels: 1 },
          results: {
            channels: [
              {
                ...(req.query.get('detect_language') === 'true'
                  ? { detected_language: spoken.language, language_confidence: 0.9 }
                  : {}),
                alternatives: [{ transcript: spoken.text, confidence: 0.99, words }],
              },
            ],
            ...(req.query.get('utterances') === 'true' ? { utterances } : {}),
          },
        });
        return true;
      }
      return false;
    },
  });
}
