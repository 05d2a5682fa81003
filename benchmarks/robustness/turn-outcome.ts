/**
 * How bench:robustness's turn-end path counts one call from the turns the turn stage handed on (turn-path.ts): a
 * pure function, so the counting rules are tested on their own (test/realtime/turn-outcome.test.ts).
 */

/** A turn the turn stage handed on: when (audio ms), and the speech it covers. */
export interface HandedTurn {
  atMs: number;
  onsetMs: number;
  lastSpeechMs: number;
}

/** One call's turn-end figures from the turns handed on, as the VAD table counts its speech runs. */
export interface TurnPathOutcome {
  /**
   * Turns of the caller's handed on before the caller went on (cut off): every one before the last, and the last
   * too when it was handed on before the caller's last word ended (what came after it was never handed on).
   */
  earlyEnds: number;
  /** Never handed on, or handed on more than 3 s after the last word (no reply would come). */
  missed: boolean;
  /** The caller's last word → the hand-over that took the turn (audio ms); null when none came after that word. */
  latencyMs: number | null;
}

/**
 * The caller's turn in what the turn stage handed on: the turns whose speech began before the caller's last word
 * (`lastWordMs`) and ended after their first (`onsetMs`, less 200 ms: the VAD's onset can lead the recording's).
 * The last of them takes the turn, unless it was handed on before the last word ended: then the caller went on
 * after it too, and the call is a cut (counted in `earlyEnds`), never a turn taken with a negative latency.
 */
export function turnPathOutcome(handed: readonly HandedTurn[], onsetMs: number, lastWordMs: number): TurnPathOutcome {
  const turn = handed.filter((h) => h.onsetMs < lastWordMs && h.lastSpeechMs > onsetMs - 200);
  const last = turn.at(-1);
  if (!last) return { earlyEnds: 0, missed: true, latencyMs: null };
  // Handed on while the caller still had words to say: they went on after it, whether or not the rest was handed on.
  if (last.atMs < lastWordMs) return { earlyEnds: turn.length, missed: false, latencyMs: null };
  return {
    earlyEnds: turn.length - 1,
    missed: last.atMs > lastWordMs + 3000,
    latencyMs: last.atMs - lastWordMs,
  };
}
