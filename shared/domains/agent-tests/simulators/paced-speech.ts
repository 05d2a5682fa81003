import { jittered, seededRandom, withWordErrors } from './stt-realism.ts';

/**
 * The paced speech model of a live-transcription double, for tests and benchmarks that time a voice pipeline
 * against audio sent in real time: everything follows from the audio clock, so an STT latency profile is exact
 * whatever the load. Speech is audio with RMS at or above `energyThreshold`; each stretch of speech is the next
 * scripted line, or the next segment of it: ` | ` marks a pause (`Do you have anything on | Tuesday morning?` is
 * said as two stretches, each finalized on its own, as a vendor finalizes each segment, when the pause is at least
 * `finalAfterMs`; a shorter pause does not end the utterance: as a real recogniser does, it goes on transcribing
 * the next segment into the same hypothesis and finalizes both together). An interim every
 * `interimEveryMs` of speech reveals one word per 150 ms heard; the final comes once `finalAfterMs` of silence
 * followed the last speech sample, but a silence before every word was "heard" is a gap between words (flite
 * pauses after "And"), not the end.
 *
 * What a hosted STT does on a real network is opt-in (the defaults keep the model above): the final's delay varies
 * (`finalJitterMs`), words are misheard (`wordErrorRate`, seeded), and interims lag the audio and change
 * (`interimLagMs`).
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
  /** Each segment's final comes `finalAfterMs` ± up to this (uniform, seeded): a hosted STT's final is not punctual. */
  finalJitterMs?: number;
  /** Word error rate of the transcripts (0–1; substitutions, deletions, insertions), seeded: see stt-realism.ts. */
  wordErrorRate?: number;
  /** Seed of the errors and the jitter (a connection adds its own offset, so calls differ but runs repeat). */
  seed?: number;
  /**
   * Interims that lag: > 0 = each interim describes the audio up to this long ago (its words' timings end there, so
   * a transcript can be seen to miss the end of the speech), its last word is often still changing (cut short,
   * corrected in the next one), and interims go on during the silence until one has caught up with all the words.
   * 0 = the original model: an interim per `interimEveryMs` of speech, timed to the audio heard.
   */
  interimLagMs?: number;
  /**
   * The line's noise (RMS, the audio's scale), when the test knows it (it put the noise on the line): speech is then
   * audio `OVER_NOISE_DB` over it (and over `energyThreshold`) for `NOISY_ONSET_MS` in a row, so line hiss, hum or a
   * burst of crackle is not a caller, and a caller 10 dB over the noise is heard. 0/absent: the clean-line model.
   * Read at every chunk, so a test may set it for its next call.
   */
  noiseRms?: number;
}

/** How far over the line's noise a chunk must be to be speech (a noisy line's). */
export const OVER_NOISE_DB = 8;
/** On a noisy line, speech begins only after this long over the threshold (a click or a crackle burst is shorter). */
export const NOISY_ONSET_MS = 80;

const OVER_NOISE_FACTOR = 10 ** (OVER_NOISE_DB / 20);

export const PACED: PacedProfile = { finalAfterMs: 150, interimEveryMs: 100, energyThreshold: 20 };

/** Silence that is a pause between segments, not a gap between words (flite leaves up to ~100 ms between words). */
const PAUSE_MS = 150;

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

/**
 * One connection's ear: `nextLine` gives the script's next line, `emit` takes interims and finals as heard.
 * `seedOffset` makes this connection's errors and jitter its own (the profile's seed plus it).
 */
export function pacedEar(
  p: PacedProfile,
  nextLine: () => string,
  emit: (h: Hypothesis, isFinal: boolean) => void,
  seedOffset = 0,
): PacedEar {
  const rnd = seededRandom((p.seed ?? 1) + seedOffset * 7919);
  const lag = p.interimLagMs ?? 0;
  let audioMs = 0;
  let speechStart: number | null = null;
  let lastSpeech = 0;
  let lastInterim = 0;
  let text = '';
  /** What the recogniser makes of `text` (word errors decided once per segment: interims and final agree). */
  let heard: string[] = [];
  let finalAfter = p.finalAfterMs;
  let caughtUp = false;
  let segments: string[] = [];
  /** Words of the earlier segments joined into this utterance, and when the current segment's speech began. */
  let base = 0;
  let revealStart = 0;
  /** Silence heard since the last speech (ms): a pause, not a gap between words, once it passes PAUSE_MS. */
  let quietMs = 0;
  /** A noisy line's onset being confirmed: when the run of speech chunks began, and how long it is so far. */
  let pendingStart: number | null = null;
  let pendingMs = 0;
  /** Words heard by audio time `t` (one per 150 ms of the current segment, after the joined segments' words). */
  const wordsBy = (t: number) => base + Math.floor((t - revealStart) / MS_PER_WORD);
  const finish = () => {
    if (speechStart === null) return null;
    const h = hypothesis(speechStart, lastSpeech, heard.join(' '));
    speechStart = null;
    return h;
  };
  const heardEveryWord = () => wordsBy(lastSpeech) >= text.split(/\s+/).length;
  /** The lagging model's interim: the words heard by `covered`, the last one possibly not settled yet. */
  const laggingInterim = (start: number) => {
    const covered = Math.min(audioMs - lag, lastSpeech);
    if (covered <= start) return;
    const done = covered >= lastSpeech && audioMs - lastSpeech >= lag;
    const k = done ? heard.length : Math.min(heard.length, Math.max(1, wordsBy(covered)));
    const words = heard.slice(0, k);
    if (!done && words.length > 0 && rnd() < 0.5) {
      // A word being heard is often transcribed cut short ("hurt…" for "hurting."), corrected by the next result.
      const w = words.at(-1)!.replace(/[.,!?;:…]+$/, '');
      words[words.length - 1] = w.slice(0, Math.max(1, Math.ceil(w.length / 2)));
    }
    caughtUp = done;
    emit(hypothesis(start, covered, words.join(' ')), false);
  };
  return {
    finish,
    hear(rms, seconds) {
      let start = audioMs;
      audioMs += seconds * 1000;
      const noise = p.noiseRms ?? 0;
      const threshold = noise > 0 ? Math.max(p.energyThreshold, noise * OVER_NOISE_FACTOR) : p.energyThreshold;
      const speech = rms >= threshold;
      if (noise > 0 && speechStart === null) {
        // A noisy line: an utterance begins only once speech has lasted NOISY_ONSET_MS, from where that run began.
        if (!speech) pendingStart = null;
        else {
          if (pendingStart === null) {
            pendingStart = start;
            pendingMs = 0;
          }
          pendingMs += seconds * 1000;
          if (pendingMs < NOISY_ONSET_MS) return;
          start = pendingStart;
          pendingStart = null;
        }
      }
      if (!speech) quietMs += seconds * 1000;
      if (speech) {
        if (speechStart === null) {
          speechStart = start;
          lastInterim = start;
          if (segments.length === 0) segments = nextLine().split(/\s*\|\s*/);
          text = segments.shift()!;
          heard = withWordErrors(text.split(/\s+/), p.wordErrorRate ?? 0, rnd);
          finalAfter = jittered(p.finalAfterMs, p.finalJitterMs ?? 0, rnd);
          base = 0;
          revealStart = start;
        } else if (quietMs >= PAUSE_MS && segments.length > 0 && heardEveryWord()) {
          // Speech again before the final, every word of the segment heard: the caller went on after a pause shorter
          // than the recogniser's endpointing, so the next segment is transcribed into the same utterance.
          const next = segments.shift()!;
          base = text.split(/\s+/).length;
          revealStart = start;
          text = `${text} ${next}`;
          heard = [...heard, ...withWordErrors(next.split(/\s+/), p.wordErrorRate ?? 0, rnd)];
        }
        quietMs = 0;
        lastSpeech = audioMs;
        caughtUp = false;
        if (audioMs - lastInterim >= p.interimEveryMs) {
          lastInterim = audioMs;
          if (lag > 0) return laggingInterim(speechStart);
          const k = Math.min(heard.length, Math.max(1, wordsBy(audioMs)));
          emit(hypothesis(speechStart, audioMs, heard.slice(0, k).join(' ')), false);
        }
      } else if (speechStart !== null && audioMs - lastSpeech >= finalAfter && heardEveryWord()) {
        emit(finish()!, true);
      } else if (speechStart !== null && lag > 0 && !caughtUp && audioMs - lastInterim >= p.interimEveryMs) {
        // Lagging interims go on into the silence until one has caught up with the speech.
        lastInterim = audioMs;
        laggingInterim(speechStart);
      }
    },
  };
}
