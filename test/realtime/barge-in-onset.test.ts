import { describe, expect, it } from 'vitest';
import { addNoise, noiseRmsFor, noiseSource } from '../../shared/kernel/audio/noise.ts';
import { pcmToInt16 } from '../../shared/kernel/audio/pcm.ts';
import { trimSilence } from '../../shared/kernel/audio/trim-silence.ts';
import { speechRms } from '../../shared/domains/agent-tests/impairments.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';
import { bargeInsOverTheAgent, sileroLine, type BargeIn } from '../../support/realtime/over-the-agent.ts';

const RATE = 8000;
/** The agent speaks this long (the caller silent) before the caller's first sound. */
const LEAD_MS = 1500;

/**
 * A phone line (digital silence, or white noise `snrDb` under the caller) on which the caller says `text` (flite,
 * its padding cut: the first sample is the first sound) `LEAD_MS` into the agent's speech, scored by the real
 * Silero VAD stage. Returns the VAD stage's output in order.
 */
async function line(text: string, snrDb: number | null): Promise<Frame[]> {
  const caller = trimSilence(await fliteUtterance(text, RATE, 'kal'));
  const x = new Int16Array((LEAD_MS / 1000) * RATE + pcmToInt16(caller).length + RATE);
  x.set(pcmToInt16(caller), (LEAD_MS / 1000) * RATE);
  if (snrDb !== null)
    addNoise(x, noiseSource({ type: 'white', rate: RATE, seed: 7 }), noiseRmsFor(speechRms(caller), snrDb));
  return sileroLine(x);
}

/**
 * The barge-ins of the real turn stage over the agent (support/realtime/over-the-agent.ts), the STT's words coming as
 * a streaming STT's interims do (the Deepgram double's paced model: one word 100 ms into the sound, a word per
 * 150 ms) from `fromMs`, where the caller's sound began.
 */
function overTheAgent(frames: Frame[], words: string[], fromMs = LEAD_MS): BargeIn[] {
  let said = 0;
  return bargeInsOverTheAgent(frames, { name: 'line-contrast' }, (clock) => {
    const due = Math.min(words.length, 1 + Math.floor((clock - fromMs - 100) / 150));
    if (clock < fromMs + 100 || due <= said) return null;
    said = due;
    return words.slice(0, due).join(' ');
  });
}

describe('barge-in from the sound\'s onset (real Silero VAD, flite "Wait, stop.")', () => {
  it("a clean line: the agent stops within 300 ms of the caller's first sound, though the VAD hears speech late", async () => {
    const frames = await line('Wait, stop.', null);
    const start = frames.find((f) => f.kind === 'speech-start');
    expect(start).toBeDefined();
    // flite's "W" glides in 20 dB under the vowel: the VAD scores it as speech only at the vowel, 200 ms on.
    expect(start!.soundOnsetMs!).toBeLessThan(LEAD_MS + 64);
    expect(start!.atMs - start!.soundOnsetMs!).toBeGreaterThan(100);
    const stops = overTheAgent(frames, ['Wait,', 'stop.']);
    expect(stops.map((s) => s.reason)).toEqual(['speech']);
    expect(stops[0]!.atMs - LEAD_MS).toBeGreaterThanOrEqual(200);
    expect(stops[0]!.atMs - LEAD_MS).toBeLessThanOrEqual(300);
  });

  it('white noise 20 dB under the caller: the hiss before them is not their sound; the stop is 200–300 ms after the voice rises over it', async () => {
    const frames = await line('Wait, stop.', 20);
    const start = frames.find((f) => f.kind === 'speech-start');
    expect(start).toBeDefined();
    // The glide is under the hiss: the sound begins where the voice rises over the line's floor (and the STT's words).
    expect(start!.soundOnsetMs!).toBeGreaterThanOrEqual(LEAD_MS);
    const stops = overTheAgent(frames, ['Wait,', 'stop.'], start!.soundOnsetMs!);
    expect(stops.map((s) => s.reason)).toEqual(['speech']);
    expect(stops[0]!.atMs - start!.soundOnsetMs!).toBeGreaterThanOrEqual(200);
    expect(stops[0]!.atMs - start!.soundOnsetMs!).toBeLessThanOrEqual(300);
  });

  it('"mm hmm" with its words over the agent is still a backchannel, however early its sound began', async () => {
    const frames = await line('mm hmm', null);
    expect(frames.some((f) => f.kind === 'speech-start')).toBe(true);
    expect(overTheAgent(frames, ['Mm-hmm.'])).toEqual([]);
  });
});
