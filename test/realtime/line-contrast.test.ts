import { describe, expect, it } from 'vitest';
import { addNoise, noiseRmsFor, noiseSource } from '../../shared/kernel/audio/noise.ts';
import { pcmToInt16 } from '../../shared/kernel/audio/pcm.ts';
import { speechRms } from '../../shared/domains/agent-tests/impairments.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import type { InterruptionChoice } from '../../shared/contracts/turn-seams.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';
import { bargeInsOverTheAgent, sileroLine, type BargeIn } from '../../support/realtime/over-the-agent.ts';

const RATE = 8000;
const BABBLE_S = 4;

/**
 * A phone line with voices behind the caller (babble mixed from flite voices saying other sentences), `snrDb` under
 * the caller's "Wait, stop." said after `BABBLE_S` seconds of the voices alone, scored by the real Silero VAD.
 * Returns the VAD stage's output in order (caller audio, VAD frames with their levels, speech events) and where the
 * caller's words begin.
 */
async function babbleLine(snrDb: number): Promise<{ frames: Frame[]; callerMs: number }> {
  const voices = await Promise.all(
    [
      ['I told him the parcel would come on Monday but it never did', 'slt'],
      ['the weather was lovely all week and we went to the beach', 'rms'],
      ['can you pass me the salt and the pepper please', 'awb'],
    ].map(async ([text, voice]) => pcmToInt16(await fliteUtterance(text!, RATE, voice))),
  );
  const caller = await fliteUtterance('Wait, stop.', RATE, 'kal');
  const x = new Int16Array(BABBLE_S * RATE + pcmToInt16(caller).length + RATE);
  x.set(pcmToInt16(caller), BABBLE_S * RATE);
  addNoise(x, noiseSource({ type: 'babble', rate: RATE, seed: 31, voices }), noiseRmsFor(speechRms(caller), snrDb));
  return { frames: await sileroLine(x), callerMs: BABBLE_S * 1000 };
}

/**
 * The barge-ins of the real turn stage over the agent (support/realtime/over-the-agent.ts); the STT's words of the
 * caller ("wait stop") come 200 ms into their speech.
 */
function overTheAgent(line: { frames: Frame[]; callerMs: number }, interruption: InterruptionChoice): BargeIn[] {
  let worded = false;
  return bargeInsOverTheAgent(line.frames, interruption, (clock) => {
    if (worded || clock < line.callerMs + 200) return null;
    worded = true;
    return 'wait stop';
  });
}

describe('line-contrast on a line with voices behind the caller (real Silero VAD, flite voices)', () => {
  it('default stops the agent for the background voices before the caller says anything', async () => {
    const line = await babbleLine(15);
    const stops = overTheAgent(line, { name: 'default' });
    expect(stops.length).toBeGreaterThan(0);
    expect(stops[0]!.atMs).toBeLessThan(line.callerMs);
  });

  for (const snrDb of [20, 12]) {
    it(`line-contrast talks on through ${BABBLE_S} s of the voices and stops for "wait, stop" ${snrDb} dB over them`, async () => {
      const line = await babbleLine(snrDb);
      const stops = overTheAgent(line, { name: 'line-contrast' });
      expect(stops.map((s) => s.reason)).toEqual(['speech']);
      // After the caller began, and on their words (200 ms in), not on the voices before them.
      expect(stops[0]!.atMs).toBeGreaterThanOrEqual(line.callerMs + 200);
      expect(stops[0]!.atMs).toBeLessThan(line.callerMs + 1000);
    });
  }
});
