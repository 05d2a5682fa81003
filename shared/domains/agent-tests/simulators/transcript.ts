/** The words STT doubles "recognise": a fixed script spread evenly over the uploaded audio's duration. */
export const SCRIPT = 'the quick brown fox jumps over the lazy dog';

export interface ScriptWord {
  word: string;
  start: number;
  end: number;
  speaker: number;
}

/** Words of `text` over `duration` seconds; the second half is speaker 1 (for diarization checks). */
export function scriptedWords(duration: number, text = SCRIPT): ScriptWord[] {
  const words = text.split(/\s+/).filter(Boolean);
  const step = duration / words.length;
  return words.map((word, i) => ({
    word,
    start: Number((i * step).toFixed(3)),
    end: Number(((i + 0.8) * step).toFixed(3)),
    speaker: i < words.length / 2 ? 0 : 1,
  }));
}
