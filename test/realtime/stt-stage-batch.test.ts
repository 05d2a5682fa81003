import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PocketsphinxSttEngine } from '../../shared/engines/stt/pocketsphinx.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import { StageHarness } from '../../workers/realtime/pipeline/harness.ts';
import { SttStage } from '../../workers/realtime/pipeline/input/stt-stage.ts';

const run = promisify(execFile);

/** flite's 16 kHz voice as raw PCM16 (pocketsphinx hears it word for word). */
async function speech(text: string): Promise<Buffer> {
  const { stdout } = await run(
    'sh',
    [
      '-c',
      `flite -voice kal16 -t "${text}" -o /dev/stdout | ffmpeg -v error -i pipe:0 -ar 16000 -ac 1 -f s16le pipe:1`,
    ],
    {
      encoding: 'buffer',
      maxBuffer: 16 << 20,
    },
  );
  return stdout as unknown as Buffer;
}

function chunks(pcm: Buffer, startMs: number): Frame[] {
  const out: Frame[] = [];
  for (let off = 0, at = startMs; off < pcm.length; off += 640, at += 20) {
    out.push({ kind: 'audio-in', pcm: pcm.subarray(off, off + 640), sampleRate: 16000, atMs: at });
  }
  return out;
}

describe('batch STT stage', () => {
  // The VAD scores behind real time on a busy machine: its speech-start for words that began at 1 s can come
  // when the words and the silence after them have all arrived. The utterance still starts at the onset.
  it('transcribes the whole utterance when the VAD reports its onset seconds late', async () => {
    const words = await speech('What are your opening hours?');
    const lead = Buffer.alloc(32_000); // 1 s of silence before the words
    const tail = Buffer.alloc(32_000); // and 1 s after
    const stage = new SttStage(new PocketsphinxSttEngine(), {
      inRate: 16000,
      language: 'en',
      now: () => 0,
      log: createLogger('silent'),
    });
    const h = new StageHarness(stage);
    h.push({ kind: 'start' } as Frame);
    h.push(...chunks(Buffer.concat([lead, words, tail]), 0));
    const speechMs = (words.length / 32_000) * 1000;
    // Only now does the lagging VAD say where the speech began and ended.
    h.push({ kind: 'speech-start', atMs: 1000 });
    h.push({ kind: 'speech-end', atMs: 1000 + speechMs + 800, lastSpeechMs: 1000 + speechMs });
    const out = await h.until((o) => o.some((f) => f.kind === 'transcript'), 60_000);
    const t = out.find((f) => f.kind === 'transcript') as Extract<Frame, { kind: 'transcript' }>;
    expect(t.failed).toBeFalsy();
    expect(t.text.toLowerCase()).toContain('opening hours');
    expect(t.batchOnsetMs).toBe(1000);
    // What is billed is the utterance and its preroll, not the whole history kept for a late onset.
    expect(stage.audioSeconds).toBeLessThan(words.length / 32_000 + 0.3 + 1.0 + 0.05);
  });
});
