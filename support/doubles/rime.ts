import { split, tone } from './audio.ts';
import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';

/** Rime: `POST /v1/rime-tts` (Bearer) with `Accept: audio/pcm` streams raw s16le. Errors `{message}`. */
export function startRimeDouble(): Promise<HttpDouble> {
  return startHttpDouble({
    name: 'rime',
    errorBody: (_status, message) => ({ body: JSON.stringify({ message }) }),
    authorize: (req, d) => req.headers.authorization === `Bearer ${d.key}`,
    async route(req, res, d) {
      if (req.method !== 'POST' || req.path !== '/v1/rime-tts') return false;
      expectShape(req.headers.accept === 'audio/pcm', 'Accept: audio/pcm');
      const body = d.json(req);
      expectShape(typeof body.speaker === 'string', 'speaker');
      expectShape(typeof body.text === 'string' && body.text, 'text');
      expectShape(typeof body.modelId === 'string', 'modelId');
      expectShape(typeof body.samplingRate === 'number', 'samplingRate');
      expectShape(typeof body.speedAlpha === 'number' && body.speedAlpha > 0, 'speedAlpha');
      await d.stream(res, split(tone(body.samplingRate, 0.3)), 'audio/pcm');
      return true;
    },
  });
}
