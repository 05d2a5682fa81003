import { ffmpeg } from '../../kernel/media/ffmpeg.ts';

/** Mouth shape of one video frame, driven by the audio under it. */
export interface MouthFrame {
  /** 0 = closed, 1 = fully open (jaw drop). */
  open: number;
  /** −1 = rounded ("oo"), 0 = neutral, 1 = spread ("ee", "s"). */
  spread: number;
}

const RATE = 16_000;

/** Decodes any audio (or the audio of a video) to mono 16 kHz s16le with ffmpeg. */
export async function decodeMono16k(path: string, signal?: AbortSignal): Promise<Int16Array> {
  const buf = await ffmpeg(['-i', path, '-vn', '-ac', '1', '-ar', String(RATE), '-f', 's16le', '-'], {
    signal,
    inputFault: true,
  });
  return new Int16Array(buf.buffer, buf.byteOffset, Math.floor(buf.length / 2));
}

/**
 * Audio → per-frame visemes: the frame's loudness (RMS in dB, normalised between the clip's noise floor and
 * its loud speech) opens the jaw; the zero-crossing rate separates spread sibilants/front vowels (high) from
 * rounded back vowels (low). Smoothed with a fast attack and a slower release, as a jaw moves.
 */
export function visemesFromPcm(pcm: Int16Array, fps: number, frames?: number): MouthFrame[] {
  const hop = RATE / fps;
  const n = frames ?? Math.ceil(pcm.length / hop);
  const db = new Float32Array(n);
  const zcr = new Float32Array(n);
  for (let f = 0; f < n; f++) {
    const a = Math.floor(f * hop);
    const b = Math.min(pcm.length, Math.floor((f + 1) * hop));
    let sum = 0;
    let crossings = 0;
    for (let i = a; i < b; i++) {
      const v = pcm[i]! / 32768;
      sum += v * v;
      if (i > a && pcm[i]! >= 0 !== pcm[i - 1]! >= 0) crossings++;
    }
    const len = Math.max(1, b - a);
    db[f] = 10 * Math.log10(sum / len + 1e-10);
    zcr[f] = crossings / len;
  }
  const sorted = [...db].sort((x, y) => x - y);
  const floor = Math.max(sorted[Math.floor(sorted.length * 0.1)] ?? -60, -60);
  const peak = Math.max(sorted[Math.floor(sorted.length * 0.95)] ?? -10, floor + 12);
  const out: MouthFrame[] = [];
  let open = 0;
  let spread = 0;
  for (let f = 0; f < n; f++) {
    const target = Math.max(0, Math.min(1, (db[f]! - floor - 3) / (peak - floor - 3)));
    open += (target - open) * (target > open ? 0.7 : 0.4);
    const z = zcr[f]!;
    const targetSpread = target < 0.05 ? 0 : z > 0.18 ? 1 : z < 0.06 ? -1 : (z - 0.12) / 0.06;
    spread += (targetSpread - spread) * 0.5;
    out.push({ open, spread: Math.max(-1, Math.min(1, spread)) });
  }
  return out;
}
