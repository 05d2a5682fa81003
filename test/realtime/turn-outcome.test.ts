import { describe, expect, it } from 'vitest';
import { turnPathOutcome, type HandedTurn } from '../../benchmarks/robustness/turn-outcome.ts';

// bench:robustness's turn-end path counts each call as a turn taken, a cut or a miss from what the turn stage handed
// on; a call counted as none of them (issue 31: a turn handed on mid-sentence, the rest never) hides a cut-in.
describe('bench:robustness turn-end outcome', () => {
  // "could you tell me [400 ms] what time you close on Saturday": speech from 4300 ms, the last word ends at 7232 ms.
  const onsetMs = 4120;
  const lastWordMs = 7232;
  const firstPart: HandedTurn = { atMs: 5420, onsetMs: 4352, lastSpeechMs: 5120 };
  const rest: HandedTurn = { atMs: 7460, onsetMs: 5536, lastSpeechMs: 7232 };

  it('counts a turn handed on mid-sentence whose rest was never handed on as a cut, with no latency', () => {
    // Regression: this call counted as neither missed nor cut (earlyEnds 0, missed false, latency −1812 ms).
    expect(turnPathOutcome([firstPart], onsetMs, lastWordMs)).toEqual({ earlyEnds: 1, missed: false, latencyMs: null });
  });

  it('counts the same cut the same way when the rest was handed on, timing the turn from the rest', () => {
    expect(turnPathOutcome([firstPart, rest], onsetMs, lastWordMs)).toEqual({
      earlyEnds: 1,
      missed: false,
      latencyMs: 228,
    });
  });

  it('takes a turn handed on after the last word, and misses one handed on 3 s late or never', () => {
    const whole: HandedTurn = { atMs: 7460, onsetMs: 4352, lastSpeechMs: 7232 };
    expect(turnPathOutcome([whole], onsetMs, lastWordMs)).toEqual({ earlyEnds: 0, missed: false, latencyMs: 228 });
    expect(turnPathOutcome([{ ...whole, atMs: lastWordMs + 3100 }], onsetMs, lastWordMs)).toMatchObject({
      earlyEnds: 0,
      missed: true,
    });
    expect(turnPathOutcome([], onsetMs, lastWordMs)).toEqual({ earlyEnds: 0, missed: true, latencyMs: null });
    // Speech before the caller's (the greeting's echo) or after their last word (the line after the turn) is not theirs.
    const before: HandedTurn = { atMs: 2000, onsetMs: 1000, lastSpeechMs: 1700 };
    const after: HandedTurn = { atMs: 8600, onsetMs: 8000, lastSpeechMs: 8300 };
    expect(turnPathOutcome([before, whole, after], onsetMs, lastWordMs)).toEqual({
      earlyEnds: 0,
      missed: false,
      latencyMs: 228,
    });
  });

  it('puts every call in one bucket: taken (latency ≥ 0), cut, or missed', () => {
    const calls: HandedTurn[][] = [[], [firstPart], [firstPart, rest], [rest], [{ ...rest, atMs: lastWordMs + 5000 }]];
    for (const handed of calls) {
      const o = turnPathOutcome(handed, onsetMs, lastWordMs);
      const taken = o.latencyMs !== null && o.latencyMs >= 0 && !o.missed;
      expect(taken || o.earlyEnds > 0 || o.missed).toBe(true);
    }
  });
});
