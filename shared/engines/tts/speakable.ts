import { EngineError } from '../../kernel/errors/engine-error.ts';

/**
 * The longest word (a run of letters, marks and digits) the local voices are given, in characters. The longest
 * English dictionary word has 45 letters and German compounds stay under 64. flite and espeak-ng read a word they
 * cannot pronounce letter by letter, and flite's cost grows faster than the word: measured here, 2,000 random
 * letters took 6.8 s of CPU with the slt voice (156-431 s of audio), so 9,000 took minutes (issue #35).
 * Scripts written without spaces between words (Han, kana, Thai, Lao, Khmer, Myanmar) are not counted as words.
 */
export const MAX_WORD_CHARS = 64;

const UNSPACED = ['Han', 'Hiragana', 'Katakana', 'Thai', 'Lao', 'Khmer', 'Myanmar'].map((s) => `\\p{sc=${s}}`).join('');
const WORD = `[[\\p{L}\\p{M}\\p{N}]--[${UNSPACED}]]`;
/** A word over the limit (linear: each start position is tried against at most MAX_WORD_CHARS + 1 characters). */
const OVERLONG = new RegExp(`${WORD}{${MAX_WORD_CHARS + 1},}`, 'v');
const OVERLONG_ALL = new RegExp(`${WORD}{${MAX_WORD_CHARS + 1},}`, 'gv');

/** True when the text has a word longer than MAX_WORD_CHARS. */
export function hasOverlongWord(text: string): boolean {
  return OVERLONG.test(text);
}

/** The refusal of such a text, written for the caller (it does not repeat the text). */
export function overlongWordMessage(param: string): string {
  return (
    `${param}: a word is longer than ${MAX_WORD_CHARS} letters or digits; the local voices would spell it out ` +
    'letter by letter. Put spaces into long runs of letters or digits, or shorten them'
  );
}

/** Throws the 400 on `param` (an `invalid_input` EngineError of `provider`) when the text has such a word. */
export function refuseOverlongWord(provider: string, text: string, param: string): void {
  if (hasOverlongWord(text)) throw EngineError.invalidInput(provider, 'invalid', overlongWordMessage(param), param);
}

/**
 * The text with every word over MAX_WORD_CHARS cut to that length: for speech that must not fail (a live call's
 * reply or greeting, a dubbed segment), where a refusal would be silence.
 */
export function speakableText(text: string): string {
  return hasOverlongWord(text) ? text.replace(OVERLONG_ALL, (w) => w.slice(0, MAX_WORD_CHARS)) : text;
}

/**
 * Breaks a token without spaces that is longer than MAX_WORD_CHARS (a URL, a path, `a/a/a/…`) after each run of
 * punctuation, and what is still too long every MAX_WORD_CHARS characters, so the text can be cut into pieces of
 * bounded length between words (text-chunks.ts).
 */
export function breakLongTokens(text: string): string {
  return text.replace(LONG_TOKEN, (token) =>
    token
      .replace(PUNCTUATION_RUN, '$& ')
      .split(' ')
      .flatMap((part) => part.match(TOKEN_PART) ?? [])
      .join(' '),
  );
}

const LONG_TOKEN = new RegExp(`\\S{${MAX_WORD_CHARS + 1},}`, 'g');
const PUNCTUATION_RUN = /[^\p{L}\p{M}\p{N}\s]+/gu;
const TOKEN_PART = new RegExp(`[^]{1,${MAX_WORD_CHARS}}`, 'gu');
