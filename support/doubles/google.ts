import { tone, wav } from './audio.ts';
import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';

/**
 * Google Cloud Text-to-Speech: `POST /v1/text:synthesize?key=<key>` → `{audioContent: base64}`, where LINEAR16 is
 * a WAV. Errors `{error: {code, message, status}}`.
 */
export function startGoogleDouble(): Promise<HttpDouble> {
  return startHttpDouble({
    name: 'google',
    errorBody: (status, message) => ({
      body: JSON.stringify({
        error: {
          code: status,
          message,
          status:
            status === 401
              ? 'UNAUTHENTICATED'
              : status === 429
                ? 'RESOURCE_EXHAUSTED'
                : status >= 500
                  ? 'UNAVAILABLE'
                  : 'INVALID_ARGUMENT',
        },
      }),
    }),
    authorize: (req, d) => req.query.get('key') === d.key,
    route(req, res, d) {
      if (req.method !== 'POST' || req.path !== '/v1/text:synthesize') return false;
      const body = d.json(req) as {
        input?: { text?: unknown };
        voice?: { languageCode?: unknown; name?: unknown };
        audioConfig?: { audioEncoding?: unknown; sampleRateHertz?: unknown };
      };
      expectShape(typeof body.input?.text === 'string' && body.input.text, 'input.text');
      expectShape(typeof body.voice?.languageCode === 'string', 'voice.languageCode');
      expectShape(body.audioConfig?.audioEncoding === 'LINEAR16', 'audioConfig.audioEncoding LINEAR16');
      const rate = Number(body.audioConfig.sampleRateHertz ?? 24000);
      d.sendJson(res, 200, { audioContent: wav(tone(rate, 0.3), rate).toString('base64') });
      return true;
    },
  });
}
