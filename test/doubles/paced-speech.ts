/**
 * The paced speech model of a live-transcription double, for tests and benchmarks that time a voice pipeline
 * against audio sent in real time: everything follows from the audio clock, so an STT latency profile is exact
 * whatever the load. Speech is audio with RMS at or above `energyThreshold`; each stretch of speech is the next
 * scripted line, or the next segment of it: ` | ` marks a pause (`Do you have anything on | Tuesday morning?` is
 * said as two stretches, each finalized on its own, as a vendor finalizes each segment). An interim every
 * `interimEveryMs` of speech reveals one word per 150 ms heard; the final comes once `finalAfterMs` of silence
 * followed the last speech sample, but a silence before every word was "heard" is a gap between words (flite
 * pauses after "And"), not the end.
 *
 * The voice-latency benchmark's figures are compared across runs: changing what this model sends, or when,
 * changes them.
 */
export interface PacedProfile {
  /** Silence after the last speech sample that ends an utterance: the final's latency. */
  finalAfterMs: number;
  /** Speech between interim results. */
  interimEveryMs: number;
  /** RMS above this is speech. */
  energyThreshold: number;
}

export const PACED: PacedProfile = { finalAfterMs: 150, interimEveryMs: 100, energyThreshold: 20 };

/** Speech heard per scripted word. */
const MS_PER_WORD = 150;

/** A hypothesis in audio seconds, its words spread evenly over it. */
export interface Hypothesis {
  transcript: string;
  start: number;
  duration: number;
  words: { word: string; start: number; end: number }[];
}

function hypothesis(startMs: number, endMs: number, transcript: string): Hypothesis {
  const words = transcript.split(/\s+/).filter(Boolean);
  const at = (i: number) => (startMs + ((endMs - startMs) * i) / words.length) / 1000;
  return {
    transcript,
    start: startMs / 1000,
    duration: (endMs - startMs) / 1000,
    words: words.map((word, i) => ({ word, start: at(i), end: at(i + 1) })),
  };
}

export interface PacedEar {
  /** Hears one audio chunk: its RMS and length. */
  hear(rms: number, seconds: number): void;
  /** Ends the utterance in progress (if any) and returns its final. */
  finish(): Hypothesis | null;
}

/** One connection's ear: `nextLine` gives the script's next line, `emit` takes interims and finals as heard. */
export function pacedEar(
  p: PacedProfile,
  nextLine: () => string,
  emit: (h: Hypothesis, isFinal: boolean) => void,
): PacedEar {
  let audioMs = 0;
  let speechStart: number | null = null;
  let lastSpeech = 0;
  let lastInterim = 0;
  let text = '';
  let segments: string[] = [];
  const finish = () => {
    if (speechStart === null) return null;
    const h = hypothesis(speechStart, lastSpeech, text);
    speechStart = null;
    return h;
  };
  const heardEveryWord = (start: number) => Math.floor((lastSpeech - start) / MS_PER_WORD) >= text.split(/\s+/).length;
  return {
    finish,
    hear(rms, seconds) {
      const start = audioMs;
      audioMs += seconds * 1000;
      if (rms >= p.energyThreshold) {
        if (speechStart === null) {
          speechStart = start;
          lastInterim = start;
          if (segments.length === 0) segments = nextLine().split(/\s*\|\s*/);
          text = segments.shift()!;
        }
        lastSpeech = audioMs;
        if (audioMs - lastInterim >= p.interimEveryMs) {
          lastInterim = audioMs;
          const words = text.split(/\s+/);
          const k = Math.min(words.length, Math.max(1, Math.floor((audioMs - speechStart) / MS_PER_WORD)));
          emit(hypothesis(speechStart, audioMs, words.slice(0, k).join(' ')), false);
        }
      } else if (speechStart !== null && audioMs - lastSpeech >= p.finalAfterMs && heardEveryWord(speechStart)) {
        emit(finish()!, true);
      }
    },
  };
}
