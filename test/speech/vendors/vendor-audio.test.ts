import { describe, expect, it } from 'vitest';
import { alignedPcm, readWav } from '../../../shared/engines/core/vendor-audio.ts';
import { wavHeader } from '../../../support/doubles/audio.ts';

describe('vendor audio helpers', () => {
  it('re-aligns odd-sized chunks to whole samples', async () => {
    async function* odd() {
      yield Buffer.from([1]);
      yield Buffer.from([2, 3, 4]);
      yield Buffer.from([5, 6, 7]);
    }
    const out: Buffer[] = [];
    for await (const c of alignedPcm(odd())) out.push(c);
    expect(out.map((b) => [...b])).toEqual([
      [1, 2, 3, 4],
      [5, 6],
    ]); // a trailing odd byte is dropped
  });

  it('reads a streamed WAV header split across chunks, skipping extra chunks before data', async () => {
    const header = wavHeader(16000, 0, true);
    const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([4, 0, 0, 0]), Buffer.from('INFO')]);
    const full = Buffer.concat([header.subarray(0, 36), list, header.subarray(36), Buffer.from([9, 9, 8, 8])]);
    async function* bytes() {
      for (let i = 0; i < full.length; i += 5) yield full.subarray(i, i + 5);
    }
    const { info, data } = await readWav('acme', bytes());
    expect(info).toEqual({ format: 1, channels: 1, sampleRate: 16000, bitsPerSample: 16 });
    const rest: number[] = [];
    for await (const c of data) rest.push(...c);
    expect(rest).toEqual([9, 9, 8, 8]);
  });
});
