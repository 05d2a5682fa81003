import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseWav } from '../../shared/kernel/audio/wav.ts';
import { recordingSpillPath, StereoRecorder } from '../../workers/realtime/pipeline/output/recorder.ts';

const RATE = 8000;
const chunk = (n: number, value: (i: number) => number) => Int16Array.from({ length: n }, (_, i) => value(i));

describe('stereo recorder', () => {
  it('spills settled audio to disk as the call goes and writes one stereo WAV with both sides aligned', async () => {
    const path = recordingSpillPath('recorder-test', `ses_rec_${process.pid}_${Date.now()}`);
    const rec = new StereoRecorder(RATE, 3600, path);
    let t = 0;
    const caller = (ms: number) => {
      for (let i = 0; i < ms / 20; i++) {
        const start = t;
        rec.addCaller(chunk(160, (k) => ((start + k) % 1000) + 1));
        t += 160;
      }
    };
    caller(3000);
    rec.addAgent(chunk(RATE, () => -7)); // 1 s of agent audio from 3.0 s
    caller(9000); // 12 s: past the spill point, while nothing is left queued
    await rec.spilled();
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).size).toBeGreaterThan(44);
    rec.addAgent(chunk(RATE * 2, () => -9)); // 2 s queued from 12.0 s …
    caller(500);
    rec.cutAgent(); // … barge-in at 12.5 s: the rest was never heard
    caller(500);
    const file = await rec.finish();
    expect(file).not.toBeNull();
    const wav = parseWav(await readFile(file!.path));
    await rec.discard();
    expect(existsSync(path)).toBe(false);

    expect(wav.channels).toBe(2);
    expect(wav.sampleRate).toBe(RATE);
    const frames = wav.data.length / 4;
    expect(frames).toBe(13 * RATE);
    const left = (i: number) => wav.data.readInt16LE(i * 4);
    const right = (i: number) => wav.data.readInt16LE(i * 4 + 2);
    for (const i of [0, 1, 23_999, 24_000, 95_999, 96_000, 103_999]) expect(left(i)).toBe((i % 1000) + 1);
    expect(right(3 * RATE - 1)).toBe(0);
    expect(right(3 * RATE)).toBe(-7);
    expect(right(4 * RATE - 1)).toBe(-7);
    expect(right(4 * RATE)).toBe(0);
    expect(right(12 * RATE)).toBe(-9);
    expect(right(12.5 * RATE - 1)).toBe(-9);
    expect(right(12.5 * RATE)).toBe(0);
    expect(right(13 * RATE - 1)).toBe(0);
  });

  it('records nothing for a call without audio, and stops at the cap', async () => {
    const empty = new StereoRecorder(
      RATE,
      60,
      recordingSpillPath('recorder-test', `ses_empty_${process.pid}_${Date.now()}`),
    );
    expect(await empty.finish()).toBeNull();
    await empty.discard();

    const capped = new StereoRecorder(
      RATE,
      1,
      recordingSpillPath('recorder-test', `ses_cap_${process.pid}_${Date.now()}`),
    );
    for (let i = 0; i < 100; i++) capped.addCaller(chunk(160, () => 5));
    capped.addAgent(chunk(RATE, () => 3));
    expect(capped.durationMs).toBe(1000);
    const file = await capped.finish();
    expect(file!.bytes).toBe(44 + RATE * 4);
    await capped.discard();
  });
});
