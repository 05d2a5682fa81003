import type { DubVideoBody } from '../../kernel/contracts/video.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { VideoFailure } from '../../kernel/media/failure.ts';
import { apertium } from '../../engines/translate/apertium.ts';
import { isEnglish } from '../../engines/stt/pocketsphinx.ts';

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

/**
 * Refuses at submission a dub that cannot run: a non-English source on the local recogniser (say which STT to
 * configure instead), or a target no installed translation reaches from the source (or, when the source will be
 * detected, from any language). The detected language is checked again when it is known (`translationFailure`).
 */
export function checkDubLanguages(body: DubVideoBody): void {
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
  const ok = source ? apertium().supports(source, body.target_language) : apertium().reaches(body.target_language);
  if (!ok) {
    throw new ApiError(
      'unsupported_language',
      {
        detail: `target_language: no translation ${source ? `from ${source} ` : ''}to ${body.target_language} is available; ${pairsText()}`,
      },
      'target_language',
    );
  }
}

/** The job's failure when the detected source language has no route to the target. */
export function translationFailure(source: string, target: string): VideoFailure | null {
  if (apertium().supports(source, target)) return null;
  return new VideoFailure(
    'unsupported_language',
    `The video's language was detected as "${source}", and no translation from ${source} to ${target} is available; ${pairsText()}. Give source_language, or pick another target_language.`,
  );
}
