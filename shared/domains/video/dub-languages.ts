import type { DubVideoBody } from '../../contracts/video.ts';
import { ApiError, isApiError } from '../../kernel/errors/api-error.ts';
import { VideoFailure } from './failure.ts';
import { resolveProviderKey } from '../../platform/keys/provider-key.ts';
import type { Infra } from '../../platform/infra.ts';
import { apertium } from '../../engines/translate/apertium.ts';
import type { TranslateEngine } from '../../engines/translate/types.ts';
import { isEnglish } from '../../engines/stt/pocketsphinx.ts';
import type { RequestHeaders } from './job-keys.ts';

type DubLanguageFields = Pick<DubVideoBody, 'stt_provider' | 'source_language' | 'target_language'> & {
  translate_provider?: DubVideoBody['translate_provider'];
};

/** The STT engine of a dub (jobs accepted before `stt_provider` existed ran on the local recogniser). */
export function dubSttProvider(body: Pick<DubVideoBody, 'stt_provider'>): DubVideoBody['stt_provider'] {
  return body.stt_provider ?? 'default';
}

/**
 * The language the dub's STT is asked for: the caller's `source_language`, or '' (the vendor engine detects it).
 * The local recogniser (pocketsphinx) knows English only, so with it an omitted source is English.
 */
export function dubSttLanguage(body: Pick<DubVideoBody, 'stt_provider' | 'source_language'>): string {
  if (body.source_language) return body.source_language;
  return dubSttProvider(body) === 'default' ? 'en' : '';
}

/** The installed translation pairs, for error messages. */
function pairsText(): string {
  const pairs = apertium().pairs();
  return pairs.length
    ? `installed Apertium pairs: ${pairs.join(', ')} (others pivot through Spanish or English where a chain of these exists)`
    : 'no Apertium pair is installed (Debian packages apertium-en-es, apertium-es-pt, …)';
}

const DEEPL_HINT = 'or configure DeepL (translate_provider "deepl": a stored deepl key or the platform DEEPL_API_KEY)';

/** The DeepL key for a developer (stored, then platform; DeepL has no request header), or null. */
async function deeplKey(infra: Infra, developerId: string, headers: RequestHeaders): Promise<string | null> {
  try {
    const k = await resolveProviderKey(infra, { vendor: 'deepl', developerId, headers });
    return k.key;
  } catch (e) {
    if (isApiError(e) && e.code === 'provider_unavailable') return null;
    throw e;
  }
}

export interface DubTranslator {
  engine: TranslateEngine;
  apiKey?: string;
}

/**
 * The translator of a dub from `source` ('' = not known yet: any language) to the target: Apertium when asked
 * for or (auto) when it has a route; DeepL when asked for (a missing key is 400 provider_unavailable) or (auto)
 * when Apertium has none and a DeepL key resolves. Null when nothing can translate.
 */
export async function dubTranslator(
  infra: Infra,
  body: DubLanguageFields,
  source: string,
  developerId: string,
  headers: RequestHeaders,
): Promise<DubTranslator | null> {
  const choice = body.translate_provider ?? 'default';
  if (choice === 'deepl') {
    const key = await resolveProviderKey(infra, { vendor: 'deepl', developerId, headers });
    return { engine: infra.engines.deepl, apiKey: key.key };
  }
  const local = source ? apertium().supports(source, body.target_language) : apertium().reaches(body.target_language);
  if (local) return { engine: apertium() };
  if (choice === 'default') return null;
  const key = await deeplKey(infra, developerId, headers);
  return key ? { engine: infra.engines.deepl, apiKey: key } : null;
}

/**
 * Refuses at submission a dub that cannot run: a non-English source on the local recogniser (say which STT to
 * configure instead), or a target nothing can translate to from the source (or, when the source will be
 * detected, from any language). The detected language is checked again when it is known (`translationFailure`).
 */
export async function checkDubLanguages(
  infra: Infra,
  body: DubLanguageFields,
  developerId: string,
  headers: RequestHeaders,
): Promise<void> {
  const stt = dubSttProvider(body);
  if (stt === 'default' && body.source_language && !isEnglish(body.source_language)) {
    throw new ApiError(
      'unsupported_language',
      {
        detail:
          `source_language "${body.source_language}": the local speech recogniser (pocketsphinx) transcribes English only. ` +
          'Set stt_provider to a vendor STT that supports the language (deepgram, assemblyai, openai, elevenlabs or groq) ' +
          'with its key: the X-Provider-Key-<Vendor> header, a stored provider key, or the platform key (e.g. DEEPGRAM_API_KEY)',
      },
      'source_language',
    );
  }
  const source = dubSttLanguage(body);
  if (!(await dubTranslator(infra, body, source, developerId, headers))) {
    throw new ApiError(
      'unsupported_language',
      {
        detail: `target_language: no translation ${source ? `from ${source} ` : ''}to ${body.target_language} is available; ${pairsText()}; ${DEEPL_HINT}`,
      },
      'target_language',
    );
  }
}

/** The job's failure when the detected source language cannot be translated to the target. */
export async function translationFailure(
  infra: Infra,
  body: DubLanguageFields,
  source: string,
  developerId: string,
  headers: RequestHeaders,
): Promise<VideoFailure | null> {
  if (await dubTranslator(infra, body, source, developerId, headers)) return null;
  return new VideoFailure(
    'unsupported_language',
    `The video's language was detected as "${source}", and no translation from ${source} to ${body.target_language} is available; ${pairsText()}; ${DEEPL_HINT}. Give source_language, or pick another target_language.`,
  );
}
