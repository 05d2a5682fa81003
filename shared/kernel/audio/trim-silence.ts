/**
 * Cuts the near-silence (10 ms windows under RMS 50, −56 dBFS: what the platform's VAD skips as silence) off both
 * ends of 8 kHz PCM s16le. flite pads each utterance with ~250 ms before and ~100 ms after the words: left in, a
 * "600 ms" pause between two segments is ~950 ms of silence, and a turn's latency would be measured from the end
 * of padding rather than from the caller's last audible sound. Shared by the voice-latency benchmark and the
 * agent-test runner: both speak flite-made caller audio.
 */
export function trimSilence(pcm: Buffer, threshold = 50): Buffer {
  const win = 80;
  const n = pcm.length >> 1;
  const loud = (i: number) => {
    let s = 0;
    const end = Math.min(n, i + win);
    for (let k = i; k < end; k++) s += pcm.readInt16LE(k * 2) ** 2;
    return Math.sqrt(s / Math.max(1, end - i)) >= threshold;
  };
  let a = 0;
  while (a < n && !loud(a)) a += win;
  let z = n;
  while (z > a && !loud(Math.max(a, z - win))) z -= win;
  return pcm.subarray(a * 2, z * 2);
}
