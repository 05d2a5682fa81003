import { describe, expect, it } from 'vitest';
import {
  decodeSample,
  encodeSample,
  mulawBase64ToPcm,
  mulawToPcm,
  pcmToMulaw,
} from '../../shared/kernel/audio/mulaw.ts';

describe('G.711 μ-law', () => {
  it('decodes the reference bytes from PROTOCOLS.md', () => {
    expect(decodeSample(0xff)).toBe(0);
    expect(decodeSample(0x7f)).toBe(0);
    expect(decodeSample(0x80)).toBe(32124);
    expect(decodeSample(0x00)).toBe(-32124);
  });

  it('encodes silence, extremes and clipping like the reference', () => {
    expect(encodeSample(0)).toBe(0xff);
    expect(encodeSample(32767)).toBe(0x80);
    expect(encodeSample(32635)).toBe(0x80);
    expect(encodeSample(-32768)).toBe(0x00);
    expect(encodeSample(-1)).toBe(0x7f);
  });

  it('is the identity on decoded values (encode ∘ decode) for every byte but the negative zero', () => {
    for (let b = 0; b < 256; b++) {
      const back = encodeSample(decodeSample(b));
      // 0x7f decodes to 0, which encodes as 0xff (positive zero).
      expect(back).toBe(b === 0x7f ? 0xff : b);
    }
  });

  it('keeps the quantisation error within half a step over the whole range', () => {
    for (let s = -32768; s <= 32767; s += 7) {
      const y = decodeSample(encodeSample(s));
      const clipped = Math.max(-32635, Math.min(32635, s));
      const step = Math.abs(clipped) < 256 ? 8 : 2 ** (31 - Math.clz32((Math.abs(clipped) + 0x84) >> 7)) * 8;
      expect(Math.abs(y - clipped)).toBeLessThanOrEqual(step + 132);
    }
  });

  it('converts buffers both ways', () => {
    const pcm = Buffer.alloc(8);
    pcm.writeInt16LE(0, 0);
    pcm.writeInt16LE(1000, 2);
    pcm.writeInt16LE(-1000, 4);
    pcm.writeInt16LE(32767, 6);
    const mu = pcmToMulaw(pcm);
    expect(mu.length).toBe(4);
    expect(mu[0]).toBe(0xff);
    expect(mu[3]).toBe(0x80);
    const back = mulawToPcm(mu);
    expect(back.readInt16LE(2)).toBeGreaterThan(900);
    expect(back.readInt16LE(4)).toBeLessThan(-900);
  });

  it('decodes a base64 payload in one pass to the same PCM as base64 then μ-law, and refuses what is not base64', () => {
    let seed = 5;
    const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    for (let len = 0; len < 200; len++) {
      const bytes = Buffer.from(Array.from({ length: len }, () => Math.floor(rnd() * 256)));
      const b64 = bytes.toString('base64');
      expect(mulawBase64ToPcm(b64)).toEqual(mulawToPcm(bytes));
      // Unpadded, and cut anywhere: the same bytes Node's decoder gives.
      const cut = b64.replace(/=+$/, '').slice(0, Math.floor(rnd() * (b64.length + 1)));
      expect(mulawBase64ToPcm(cut)).toEqual(mulawToPcm(Buffer.from(cut, 'base64')));
    }
    // Exactly the strings the Twilio schema's pattern refuses are refused.
    const pattern = /^[A-Za-z0-9+/]*={0,2}$/;
    const alphabet = 'AZaz09+/=-_ .é\n';
    for (let i = 0; i < 2000; i++) {
      const str = Array.from(
        { length: Math.floor(rnd() * 12) },
        () => alphabet[Math.floor(rnd() * alphabet.length)],
      ).join('');
      expect(mulawBase64ToPcm(str) !== null).toBe(pattern.test(str));
    }
  });
});
