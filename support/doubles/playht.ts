import { split, tone, wavHeader } from './audio.ts';
import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';

/**
 * PlayHT: `POST /api/v2/tts/stream` with `AUTHORIZATION: <secret>` + `X-USER-ID: <user>`; `output_format: wav`
 * streams a WAV whose header carries placeholder sizes. `key` is `<userId>:<secret>`. Errors
 * `{error_message, error_id}`.
 */
export function startPlayHtDouble(): Promise<HttpDouble> {
  return startHttpDouble(
    {
      name: 'playht',
      errorBody: (status, message) => ({
        body: JSON.stringify({ error_message: message, error_id: status === 401 ? 'UNAUTHORIZED' : `E${status}` }),
      }),
      authorize: (req, d) => `${String(req.headers['x-user-id'])}:${String(req.headers.authorization)}` === d.key,
      async route(req, res, d) {
        if (req.method !== 'POST' || req.path !== '/api/v2/tts/stream') return false;
        const body = d.json(req);
        expectShape(typeof body.text === 'string' && body.text, 'text');
        expectShape(typeof body.voice === 'string', 'voice');
        expectShape(typeof body.voice_engine === 'string', 'voice_engine');
        expectShape(body.output_format === 'wav', 'output_format wav');
        const rate = Number(body.sample_rate ?? 24000);
        const [first, ...rest] = split(tone(rate, 0.3));
        await d.stream(res, [Buffer.concat([wavHeader(rate, 0, true), first!]), ...rest], 'audio/wav');
        return true;
      },
    },
    'user-double:secret-double',
  );
}
