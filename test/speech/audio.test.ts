import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  collect,
  decodeToPcm,
  encodeStream,
  encodeWav,
  int16ToPcm,
  parseWav,
  pcmToFloat32,
  pcmToInt16,
  float32ToPcm,
  Resampler,
  resamplePcm,
  sniffMedia,
  wavHeader,
} from '../../shared/kernel/audio/index.ts';

function sine(freq: number, rate: number, seconds: number, amp = 10000): Int16Array {
  return Int16Array.from({ length: Math.round(rate * seconds) }, (_, i) =>
    Math.round(amp * Math.sin((2 * Math.PI * freq * i) / rate)),
  );
}

/** Amplitude of one frequency in a signal (single-bin DFT), ignoring the edges. */
function amplitudeAt(x: Int16Array, freq: number, rate: number): number {
  const from = Math.floor(x.length * 0.1);
  const to = Math.floor(x.length * 0.9);
  let re = 0;
  let im = 0;
  for (let i = from; i < to; i++) {
    re += x[i]! * Math.cos((2 * Math.PI * freq * i) / rate);
    im += x[i]! * Math.sin((2 * Math.PI * freq * i) / rate);
  }
  return (2 * Math.hypot(re, im)) / (to - from);
}

async function* chunksOf(buf: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

describe('wav', () => {
  it('writes and parses a header, and reads streamed headers with unknown sizes', () => {
    const pcm = int16ToPcm(sine(440, 16000, 0.1));
    const wav = encodeWav(pcm, 16000);
    const parsed = parseWav(wav);
    expect(parsed).toMatchObject({ sampleRate: 16000, channels: 1, bitsPerSample: 16, formatTag: 1 });
    expect(parsed.data.equals(pcm)).toBe(true);
    const streamed = Buffer.concat([wavHeader({ sampleRate: 8000 }), pcm]);
    expect(streamed.readUInt32LE(40)).toBe(0xffffffff);
    expect(parseWav(streamed).data.length).toBe(pcm.length);
  });

  it('rejects garbage with invalid_audio', () => {
    expect(() => parseWav(Buffer.from('RIFF....WAVEjunk'))).toThrow(/could not be decoded/);
    expect(() => parseWav(Buffer.from('hello'))).toThrow(expect.objectContaining({ code: 'invalid_audio' }));
  });
});

describe('pcm', () => {
  it('converts s16le ↔ Int16 ↔ Float32 losslessly for int16 values', () => {
    const s = Int16Array.from([0, 1, -1, 32767, -32768, 1234]);
    const buf = int16ToPcm(s);
    expect([...pcmToInt16(buf)]).toEqual([...s]);
    expect([...pcmToInt16(float32ToPcm(pcmToFloat32(buf)))]).toEqual([...s]);
    // An odd byte offset (a slice of a pooled Buffer) still reads correctly.
    const odd = Buffer.concat([Buffer.from([9]), buf]).subarray(1);
    expect([...pcmToInt16(odd)]).toEqual([...s]);
  });
});

describe('resampler', () => {
  it.each([
    [8000, 16000],
    [16000, 8000],
    [8000, 24000],
    [24000, 8000],
    [16000, 24000],
    [44100, 16000],
    [22050, 16000],
  ])('%i → %i keeps a passband tone and the duration', (inRate, outRate) => {
    const x = sine(1000, inRate, 1);
    const y = resamplePcm(int16ToPcm(x), inRate, outRate);
    const out = pcmToInt16(y);
    expect(Math.abs(out.length - outRate)).toBeLessThanOrEqual(1);
    expect(amplitudeAt(out, 1000, outRate)).toBeGreaterThan(9500);
    expect(amplitudeAt(out, 1000, outRate)).toBeLessThan(10500);
  });

  it('removes content above the new Nyquist frequency when downsampling (no aliasing)', () => {
    // A 6 kHz tone at 16 kHz would alias to 2 kHz at 8 kHz; the low-pass must remove it.
    const y = pcmToInt16(resamplePcm(int16ToPcm(sine(6000, 16000, 1)), 16000, 8000));
    expect(amplitudeAt(y, 2000, 8000)).toBeLessThan(100);
  });

  it('gives the same output for 20 ms chunks as for one block (state kept across chunks)', () => {
    const x = sine(440, 8000, 0.5);
    const whole = pcmToInt16(resamplePcm(int16ToPcm(x), 8000, 16000));
    const r = new Resampler(8000, 16000);
    const parts: number[] = [];
    for (let i = 0; i < x.length; i += 160) parts.push(...r.process(x.subarray(i, i + 160)));
    parts.push(...r.flush());
    expect(parts).toEqual([...whole]);
  });

  // The per-sample loop was made cheaper (float64 storage of the same float32 weights, four taps a step in the same
  // order): the samples must stay exactly those it gave before (digests taken from the code before that change).
  it.each([
    [16000, 8000, '7331fd1a5f74f40684ced855fbe0162b'],
    [8000, 16000, '127f0394778706969319e408221df0f0'],
    [22050, 8000, '5daf3ca97f6733c66a4b84e30dfe586e'],
    [8000, 48000, '63d5ba30f8cddecdd368b7e603c5f627'],
    [24000, 8000, '72be1a9713f8cc4fef86605853c54116'],
  ])('%i → %i gives exactly the samples it always gave', (inRate, outRate, digest) => {
    const input = new Int16Array(16000 * 3);
    let seed = 1;
    for (let i = 0; i < input.length; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      input[i] = Math.round(Math.sin(i / 9) * 9000 + ((seed / 0x7fffffff) * 2 - 1) * 3000);
    }
    const r = new Resampler(inRate, outRate);
    const h = createHash('sha256');
    for (let o = 0; o < input.length; o += 320) h.update(r.process(input.subarray(o, o + 320)));
    h.update(r.flush());
    expect(h.digest('hex').slice(0, 32)).toBe(digest);
  });
});

describe('ffmpeg', () => {
  const pcm = int16ToPcm(sine(440, 16000, 1));

  it.each(['mp3', 'ogg', 'aac', 'flac'] as const)(
    'encodes a chunk stream to %s and decodes it back',
    async (format) => {
      const encoded = await collect(encodeStream(chunksOf(pcm, 3200), { inputRate: 16000, format }));
      expect(sniffMedia(encoded)).toBe('media');
      const decoded = await decodeToPcm(encoded, { sampleRate: 16000 });
      expect(decoded.duration).toBeGreaterThan(0.9);
      expect(decoded.duration).toBeLessThan(1.2);
      expect(amplitudeAt(pcmToInt16(decoded.pcm), 440, 16000)).toBeGreaterThan(5000);
    },
  );

  it('streams wav and pcm in-process, resampling on the way', async () => {
    const wav = await collect(
      encodeStream(chunksOf(pcm, 3200), { inputRate: 16000, format: 'wav', outputRate: 24000 }),
    );
    expect(parseWav(wav).sampleRate).toBe(24000);
    const raw = await collect(
      encodeStream(chunksOf(pcm, 3200), { inputRate: 16000, format: 'pcm', outputRate: 24000 }),
    );
    expect(Math.abs(raw.length / 2 - 24000)).toBeLessThanOrEqual(1);
  });

  it('decodes a stream input and downmixes stereo', async () => {
    const stereo = Buffer.alloc(pcm.length * 2);
    for (let i = 0; i < pcm.length / 2; i++) {
      stereo.writeInt16LE(pcm.readInt16LE(i * 2), i * 4);
      stereo.writeInt16LE(pcm.readInt16LE(i * 2), i * 4 + 2);
    }
    const wav = encodeWav(stereo, 16000, 2);
    const fromBuffer = await decodeToPcm(wav, { sampleRate: 8000 });
    expect(fromBuffer.duration).toBeCloseTo(1, 2);
    const fromStream = await decodeToPcm(
      chunksOf(await collect(encodeStream(chunksOf(pcm, 4000), { inputRate: 16000, format: 'mp3' })), 1000),
      { sampleRate: 16000 },
    );
    expect(fromStream.duration).toBeGreaterThan(0.9);
  });

  it('rejects garbage, empty input and files without audio as invalid_audio', async () => {
    await expect(
      decodeToPcm(Buffer.from('definitely not audio, just text'), { sampleRate: 16000 }),
    ).rejects.toMatchObject({
      code: 'invalid_audio',
      status: 400,
    });
    await expect(decodeToPcm(Buffer.alloc(0), { sampleRate: 16000 })).rejects.toMatchObject({ code: 'invalid_audio' });
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    expect(sniffMedia(png)).toBe('not_media');
    expect(sniffMedia(Buffer.from('{"hello": "world"}'))).toBe('not_media');
  });

  it('encodes while input is still arriving (raw input is not probed for seconds first)', async () => {
    // Regression: without -analyzeduration 0 ffmpeg waited for ~5 s of audio (here: all of it) before encoding.
    let ended = false;
    async function* slow(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 100; i++) {
        yield int16ToPcm(sine(440, 16000, 0.1));
        await new Promise((r) => setTimeout(r, 30));
      }
      ended = true;
    }
    let endedAtFirstOutput: boolean | null = null;
    for await (const _chunk of encodeStream(slow(), { inputRate: 16000, format: 'mp3' })) {
      endedAtFirstOutput ??= ended;
    }
    expect(endedAtFirstOutput).toBe(false);
  });

  it('stops ffmpeg when the signal aborts', async () => {
    const ac = new AbortController();
    async function* endless(): AsyncGenerator<Buffer> {
      for (;;) {
        yield pcm;
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    const out = encodeStream(endless(), { inputRate: 16000, format: 'mp3', signal: ac.signal });
    setTimeout(() => ac.abort(new Error('stop')), 100);
    await expect(collect(out)).rejects.toThrow();
  });
});
