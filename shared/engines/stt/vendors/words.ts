import type { SttRequest, TranscriptionResult, TranscriptSegment, TranscriptWord } from '../types.ts';

/** Helpers STT vendor adapters share: segments from word lists, language codes, durations. */

export interface SpeakerWord extends TranscriptWord {
  /** Vendor speaker label, normalised by `speakerLabel`. */
  speaker?: string;
}

/** `speaker_<n>` as the contract's TranscriptSegment wants it, from a number or a letter label (A, B, …). */
export function speakerLabel(raw: string | number | null | undefined): string | undefined {
  if (raw === null || raw === undefined || raw === '') return undefined;
  if (typeof raw === 'number') return `speaker_${raw}`;
  if (/^speaker_\d+$/.test(raw)) return raw;
  if (/^\d+$/.test(raw)) return `speaker_${raw}`;
  if (/^[A-Z]$/.test(raw)) return `speaker_${raw.charCodeAt(0) - 65}`;
  return raw;
}

/**
 * Groups words into segments: a new segment starts on a speaker change, a pause over `maxGapS`, or after a
 * word that ends a sentence.
 */
export function segmentsFromWords(words: SpeakerWord[], maxGapS = 0.8): TranscriptSegment[] {
  const out: TranscriptSegment[] = [];
  let cur: { words: SpeakerWord[] } | null = null;
  for (const w of words) {
    const prev = cur?.words.at(-1);
    const split =
      !cur || !prev || prev.speaker !== w.speaker || w.start - prev.end > maxGapS || /[.!?]["')\]]?$/.test(prev.word);
    if (split) {
      if (cur) out.push(toSegment(cur.words));
      cur = { words: [w] };
    } else cur!.words.push(w);
  }
  if (cur) out.push(toSegment(cur.words));
  return out;
}

function toSegment(words: SpeakerWord[]): TranscriptSegment {
  const seg: TranscriptSegment = {
    start: words[0]!.start,
    end: words.at(-1)!.end,
    text: words.map((w) => w.word).join(' '),
  };
  if (words[0]!.speaker) seg.speaker = words[0]!.speaker;
  return seg;
}

/** What a batch vendor heard, in its own terms (each adapter maps its answer's fields to these). */
export interface VendorHeard {
  text: string;
  words: SpeakerWord[];
  /** The vendor's own utterances as segments, where it returns them; otherwise segments are made from the words. */
  segments?: TranscriptSegment[];
  /** The language the vendor detected or was told (any of the forms `languageCode` reads). */
  language: string | null | undefined;
  /** The audio's duration as the vendor reports it; otherwise the request's PCM. */
  duration?: number;
}

/**
 * A batch vendor's answer as the contract's TranscriptionResult: segments (the vendor's utterances, else grouped
 * from its words), the language as a 639-1 code, the duration, and the plain word list when the request asked for
 * word timestamps. One place, so every vendor answers the same fields the same way.
 */
export function vendorTranscription(
  req: Pick<SttRequest, 'pcm' | 'sampleRate' | 'language' | 'timestamps'>,
  heard: VendorHeard,
): TranscriptionResult {
  const result: TranscriptionResult = {
    text: heard.text,
    segments: heard.segments?.length ? heard.segments : segmentsFromWords(heard.words),
    language: languageCode(heard.language, req.language),
    duration: heard.duration ?? pcmSeconds(req.pcm, req.sampleRate),
  };
  if (req.timestamps === 'word') result.words = plainWords(heard.words);
  return result;
}

/** Drops the speaker field for the result's plain word list. */
export function plainWords(words: SpeakerWord[]): TranscriptWord[] {
  return words.map(({ word, start, end }) => ({ word, start, end }));
}

export function pcmSeconds(pcm: Buffer, sampleRate: number): number {
  return pcm.length / 2 / sampleRate;
}

/** Whisper reports languages by English name; ISO 639-3 codes come from some vendors. Both map to 639-1. */
const LANGUAGE_NAMES: Record<string, string> = {
  english: 'en',
  spanish: 'es',
  french: 'fr',
  german: 'de',
  italian: 'it',
  portuguese: 'pt',
  dutch: 'nl',
  russian: 'ru',
  chinese: 'zh',
  japanese: 'ja',
  korean: 'ko',
  arabic: 'ar',
  hindi: 'hi',
  polish: 'pl',
  turkish: 'tr',
  swedish: 'sv',
  ukrainian: 'uk',
  eng: 'en',
  spa: 'es',
  fra: 'fr',
  deu: 'de',
  ita: 'it',
  por: 'pt',
  nld: 'nl',
  rus: 'ru',
  zho: 'zh',
  cmn: 'zh',
  jpn: 'ja',
  kor: 'ko',
  ara: 'ar',
  hin: 'hi',
  pol: 'pl',
  tur: 'tr',
  swe: 'sv',
  ukr: 'uk',
};

/** A language code as the contract shows it (`en`), from a vendor's name, 639-3 code or locale (`en_us`). */
export function languageCode(vendorValue: string | null | undefined, fallback: string): string {
  if (!vendorValue) return fallback || 'en';
  const v = vendorValue.toLowerCase();
  return LANGUAGE_NAMES[v] ?? (/^[a-z]{2}([_-][a-z]+)?$/.test(v) ? v.slice(0, 2) : v);
}
