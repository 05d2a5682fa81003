import { EngineError } from '../../kernel/errors/engine-error.ts';
import { vendorJson } from '../core/vendor-client.ts';
import { TranslateEngine, type TranslateRequest } from './types.ts';

interface DeepLResponse {
  translations: { detected_source_language?: string; text: string }[];
}

/** DeepL's target codes that need a variant (plain `EN` and `PT` are deprecated as targets). */
const TARGET_VARIANTS: Record<string, string> = { en: 'EN-US', pt: 'PT-PT' };

/**
 * DeepL API v2: `POST {base}/v2/translate` JSON `{text: [...], target_lang, source_lang?}` with
 * `Authorization: DeepL-Auth-Key <key>` → `{translations: [{detected_source_language, text}]}`, one per text in
 * order. Base URL `https://api.deepl.com` (free-plan keys, ending `:fx`, use `https://api-free.deepl.com`). At most
 * 50 texts per request. Languages are DeepL's to judge: an unsupported one comes back as a 400.
 */
export class DeepLTranslateEngine extends TranslateEngine {
  readonly provider = 'deepl';
  readonly label = 'deepl.translate';
  private readonly baseUrl: string | undefined;

  constructor(opts: { baseUrl?: string } = {}) {
    super();
    this.baseUrl = opts.baseUrl?.replace(/\/+$/, '');
  }

  supports(source: string, target: string): boolean {
    return Boolean(source || target);
  }

  protected async _translate(req: TranslateRequest): Promise<string[]> {
    if (!req.apiKey) throw new EngineError(this.provider, 'auth', 'deepl: no API key', false);
    const base = this.baseUrl ?? (req.apiKey.endsWith(':fx') ? 'https://api-free.deepl.com' : 'https://api.deepl.com');
    const lang = (tag: string) => tag.toLowerCase().split(/[-_]/)[0]!;
    const target = /[-_]/.test(req.target)
      ? req.target.toUpperCase().replace('_', '-')
      : (TARGET_VARIANTS[lang(req.target)] ?? lang(req.target).toUpperCase());
    const out: string[] = [];
    for (let i = 0; i < req.texts.length; i += 50) {
      const texts = req.texts.slice(i, i + 50);
      const res = await vendorJson<DeepLResponse>(this.provider, `${base}/v2/translate`, {
        headers: { authorization: `DeepL-Auth-Key ${req.apiKey}` },
        json: {
          text: texts,
          target_lang: target,
          ...(req.source ? { source_lang: lang(req.source).toUpperCase() } : {}),
        },
        // Translating the same texts twice changes nothing (DeepL bills characters, so retries stay few: the default).
        idempotent: true,
        signal: req.signal ?? AbortSignal.timeout(60_000),
      });
      if (res.translations?.length !== texts.length) {
        throw new EngineError(this.provider, 'upstream', 'deepl answered a different number of translations', true);
      }
      out.push(...res.translations.map((t) => t.text));
    }
    return out;
  }
}
