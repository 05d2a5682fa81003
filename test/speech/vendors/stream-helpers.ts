import type { SttStreamEvent } from '../../../shared/engines/stt/types.ts';

/** Feeds audio in 20 ms frames, as the phone pipeline does. */
export function frames(audio: Buffer, bytesPer20ms: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < audio.length; i += bytesPer20ms) out.push(audio.subarray(i, i + bytesPer20ms));
  return out;
}

export async function drain(events: AsyncIterable<SttStreamEvent>): Promise<SttStreamEvent[]> {
  const out: SttStreamEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** G.711 μ-law encoding of s16le PCM (PROTOCOLS.md), for the μ-law pass-through case. */
export function mulaw(pcm: Buffer): Buffer {
  const out = Buffer.alloc(pcm.length / 2);
  for (let i = 0; i < out.length; i++) {
    let s = pcm.readInt16LE(i * 2);
    const sign = s < 0 ? 0x80 : 0;
    if (s < 0) s = -s;
    s = Math.min(s, 32635) + 0x84;
    let exp = 7;
    for (let m = 0x4000; (s & m) === 0 && exp > 0; m >>= 1) exp--;
    out[i] = ~(sign | (exp << 4) | ((s >> (exp + 3)) & 0x0f)) & 0xff;
  }
  return out;
}
