import type { Call } from './line.ts';

// The realtime role's turn code, loaded as a role is (a dynamic import: only processes that run it load it).
const { LineLevels } = await import('../../workers/realtime/pipeline/turn/line-levels.ts');

/** What is asked of an interruption detector (pipeline/turn/interruption.ts), as the turn stage asks it. */
interface InterruptionDetector {
  decide(s: {
    phase: 'speaking';
    speechMs: number;
    soundMs?: number;
    text: string;
    final: boolean;
    contrastDb: number | null;
    lineContrastDb: number | null;
    underCallerDb: number | null;
  }): 'speech' | 'long_speech' | 'backchannel' | 'pending';
}

/** What the VAD stage emitted, in order (the frames the turn stage decides barge-ins from). */
export type ChainEvent =
  | { kind: 'speech-start'; atMs: number; soundOnsetMs?: number }
  | { kind: 'speech-end'; atMs: number }
  | { kind: 'vad-frame'; endMs: number; levelDb?: number }
  | { kind: string };

export interface BargeInOutcome {
  /** Agent utterances (the caller silent) the detector stopped. */
  falseBargeIns: number;
  /** The caller's turn taken as a barge-in over the agent: its onset → the detector's decision (audio ms). */
  stopMs: number | null;
}

export interface Words {
  /** The caller's first words, as a streaming STT gives them `lagMs` after the speech began. */
  caller: string;
  /** What the STT makes of the line's noise (background voices' words), or '' for nothing. */
  noise: string;
  lagMs: number;
}

/**
 * `soundOnset`: the detector counts `minMs` from the sound's onset (the VAD stage's `soundOnsetMs`), as the turn
 * stage does; false: from the VAD's onset, as it did before.
 */
export interface ReplayOptions {
  soundOnset: boolean;
}

/**
 * The turn stage's barge-in path (turn-stage.ts `onVadFrame`) replayed over one call's VAD output, with the real
 * interruption detector and the real line-level tracker: on every scored frame of a speech run, the detector is
 * asked about it as the turn stage asks (its length, the words so far, the most it has stood over the line).
 * Twice over: during the agent's utterances (the caller silent: a verdict that stops the agent is a false barge-in),
 * and over the caller's turn as if the agent were still speaking (a real barge-in: how soon it would stop). Words
 * arrive `lagMs` after the speech they belong to began. `at.callerOnsetMs`: where the caller's speech begins (its
 * sound's onset, on the same call without noise); `at.delayMs`: the input processors' delay.
 */
export function replayBargeIns(
  events: readonly ChainEvent[],
  call: Call,
  at: { delayMs: number; callerOnsetMs: number },
  detector: InterruptionDetector,
  words: Words,
  opts: ReplayOptions = { soundOnset: true },
): BargeInOutcome {
  const levels = new LineLevels();
  const agent = call.agent.map(([a, b]) => [a + at.delayMs, b + at.delayMs] as const);
  const onset = at.callerOnsetMs;
  const end = call.endMs + at.delayMs;
  let run: {
    onsetMs: number;
    soundOnsetMs: number;
    contrastDb: number | null;
    underCallerDb: number | null;
  } | null = null;
  const barged = new Set<number>();
  let stopMs: number | null = null;
  const heard = (fromMs: number, atMs: number, text: string) => (text && atMs >= fromMs + words.lagMs ? text : '');
  for (const f of events) {
    if (f.kind === 'speech-start' && 'atMs' in f) {
      const soundOnsetMs = opts.soundOnset && 'soundOnsetMs' in f ? (f.soundOnsetMs ?? f.atMs) : f.atMs;
      run = { onsetMs: f.atMs, soundOnsetMs, contrastDb: null, underCallerDb: null };
    } else if (f.kind === 'speech-end') run = null;
    else if (f.kind === 'vad-frame' && 'endMs' in f) {
      if (!run) {
        if (f.levelDb !== undefined) levels.push(f.endMs, f.levelDb, null);
        continue;
      }
      const t = f.endMs;
      const r = run;
      const during = agent.findIndex(([a, b]) => r.onsetMs >= a && r.onsetMs < b && t < b);
      const overCaller = t >= onset && t <= end + 300 && stopMs === null;
      // Speech neither over the agent nor taken as a barge-in is a caller turn: not the line's background.
      if (f.levelDb !== undefined) levels.push(t, f.levelDb, run.onsetMs, during < 0 && !overCaller);
      const voices = levels.carriesVoices();
      const c = levels.contrastDb();
      if (c !== undefined && (run.contrastDb === null || c > run.contrastDb)) run.contrastDb = c;
      const under = levels.underCallerDb();
      if (under !== undefined && (run.underCallerDb === null || under < run.underCallerDb)) run.underCallerDb = under;
      if (during < 0 && !overCaller) continue;
      const text = (overCaller && heard(onset, t, words.caller)) || heard(run.onsetMs, t, words.noise);
      const verdict = detector.decide({
        phase: 'speaking',
        speechMs: t - run.onsetMs,
        soundMs: t - run.soundOnsetMs,
        text,
        final: false,
        contrastDb: voices ? run.contrastDb : null,
        lineContrastDb: run.contrastDb,
        underCallerDb: run.underCallerDb,
      });
      if (verdict === 'backchannel') levels.callerSpoke(run.onsetMs);
      if (verdict !== 'speech' && verdict !== 'long_speech') continue;
      levels.callerSpoke(run.onsetMs);
      if (during >= 0) barged.add(during);
      else stopMs = t - onset;
    }
  }
  return { falseBargeIns: barged.size, stopMs };
}
