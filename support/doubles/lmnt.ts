import { split, tone } from './audio.ts';
import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';

/** LMNT: `POST /v1/ai/speech/bytes` with `X-API-Key`; `format: pcm_s16le` streams raw samples. Errors `{error: msg}`. */
export function startLmntDouble(): Promise<HttpDouble> {
  return startHttpDouble({
    name: 'lmnt',
    errorBody: (_status, message) => ({ body: JSON.stringify({ error: message }) }),
    authorize: (req, d) => req.headers['x-api-key'] === d.key,
    async route(req, res, d) {
      if (req.method !== 'POST' || req.path !== '/v1/ai/speech/bytes') return false;
      const body = d.json(req);
      expectShape(typeof body.voice === 'string', 'voice');
      expectShape(typeof body.text === 'string' && body.text, 'text');
      expectShape(body.format === 'pcm_s16le', 'format pcm_s16le');
      expectShape(body.speed === undefined, 'no speed field (not in the speech API)');
      expectShape(typeof body.sample_rate === 'number', 'sample_rate');
      await d.stream(res, split(tone(body.sample_rate, 0.3)), 'application/octet-stream');
      return true;
    },
  });
}
