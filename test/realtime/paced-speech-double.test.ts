import { describe, expect, it } from 'vitest';
import { pacedEar, type Hypothesis } from '../../shared/domains/agent-tests/simulators/paced-speech.ts';

/**
 * The live-STT double's pacing (issue 25's sweep depends on it): a pause shorter than the recogniser's endpointing
 * does not end the utterance. Before this, the double finalized the first segment only once the whole sentence had
 * ended and gave the rest of the sentence to the caller's next turn, so every later turn of the call was off by one.
 */
function speak(finalAfterMs: number, pauseMs: number): { finals: string[]; interims: string[] } {
  const finals: string[] = [];
  const interims: string[] = [];
  const ear = pacedEar(
    { finalAfterMs, interimEveryMs: 100, energyThreshold: 20 },
    () => 'Do you have anything on | Tuesday morning?',
    (h: Hypothesis, isFinal: boolean) => (isFinal ? finals : interims).push(h.transcript),
  );
  const chunk = (rms: number, ms: number) => {
    for (let t = 0; t < ms; t += 20) ear.hear(rms, 0.02);
  };
  chunk(1000, 5 * 150 + 100); // "Do you have anything on"
  chunk(0, pauseMs);
  chunk(1000, 2 * 150 + 100); // "Tuesday morning?"
  chunk(0, finalAfterMs + 100);
  return { finals, interims };
}

describe('paced live-STT double', () => {
  it('finalizes each segment on its own when the pause is longer than its endpointing', () => {
    expect(speak(150, 400).finals).toEqual(['Do you have anything on', 'Tuesday morning?']);
  });

  it('joins the segments into one utterance when the caller goes on within its endpointing', () => {
    const { finals, interims } = speak(500, 300);
    expect(finals).toEqual(['Do you have anything on Tuesday morning?']);
    // The interims after the pause carry on from the words already heard.
    expect(interims.at(-1)).toBe('Do you have anything on Tuesday morning?');
    expect(interims).toContain('Do you have anything on Tuesday');
  });
});
