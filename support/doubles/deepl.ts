import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';

/**
 * DeepL API v2: `POST /v2/translate` JSON `{text: string[], target_lang, source_lang?}` with
 * `Authorization: DeepL-Auth-Key <key>` → `{translations: [{detected_source_language, text}]}`; errors
 * `{"message": "..."}` (403 for a bad key). No translation model runs: each text comes back marked with the target
 * (`[DE] <text>`), so a test can tell DeepL's output from Apertium's.
 */
export function startDeepLDouble(): Promise<HttpDouble> {
  return startHttpDouble({
    name: 'deepl',
    errorBody: (_status, message) => ({ body: JSON.stringify({ message }) }),
    authorize: (req, d) => req.headers.authorization === `DeepL-Auth-Key ${d.key}`,
    route(req, res, d) {
      if (req.method !== 'POST' || req.path !== '/v2/translate') return false;
      const body = d.json(req) as { text?: unknown; target_lang?: unknown; source_lang?: unknown };
      expectShape(Array.isArray(body.text) && body.text.every((t) => typeof t === 'string'), 'text: string[]');
      expectShape(
        typeof body.target_lang === 'string' && /^[A-Z]{2}(-[A-Z]{2,4})?$/.test(body.target_lang),
        'target_lang',
      );
      const source = typeof body.source_lang === 'string' ? body.source_lang : 'EN';
      d.sendJson(res, 200, {
        translations: (body.text as string[]).map((t) => ({
          detected_source_language: source,
          text: `[${body.target_lang as string}] ${t}`,
        })),
      });
      return true;
    },
  });
}
