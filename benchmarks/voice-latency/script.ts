/**
 * What the benchmark's callers say. ` | ` marks a pause mid-sentence (200–600 ms, varied by call and turn): after a
 * trailing "because", a preposition, a number being read out — where a caller stops to think and goes on. Some
 * turns end with a question. The last turn asks for a long answer and barges in one second into it.
 */
export const UTTERANCES = [
  'I would like to come in this week because | my tooth has been hurting.',
  'Do you have anything on | Tuesday morning?',
  'My phone number is five five five | zero one three four.',
  'And what does it cost without insurance?',
];
export const BARGE_Q = 'Tell me everything about your opening hours.';
export const BARGE_IN = 'Wait, I only need Saturday.';
export const REPLY = 'Sure, I can help with that. Let me check what we have available for you.';
export const LONG =
  'We are open from eight in the morning until six in the evening from Monday to Friday. ' +
  'On Saturdays we open at nine and close at one in the afternoon. ' +
  'We are closed on Sundays and on public holidays, but you can always leave a message. ' +
  'Emergency appointments are available every weekday morning if you call before ten.';

/** What turn `k` of `turns` says (the Deepgram double's script and the caller's audio agree on it). */
export function utterance(k: number, turns: number): string {
  return k === turns - 1 ? BARGE_Q : k === turns ? BARGE_IN : UTTERANCES[k % UTTERANCES.length]!;
}

/** The pause of call `i`, turn `k`: 200–600 ms in 100 ms steps, spread over calls. */
export function pauseMs(i: number, k: number): number {
  return 200 + ((i * 3 + k * 2) % 5) * 100;
}

export function pct(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/**
 * Cuts the near-silence (10 ms windows under RMS 50, −56 dBFS: what the platform's VAD skips as silence) off both
 * ends of 8 kHz PCM s16le. flite pads each utterance with ~250 ms before and ~100 ms after the words: left in, a
 * "600 ms" pause between two segments is ~950 ms of silence, and a turn's latency would be measured from the end
 * of padding rather than from the caller's last audible sound.
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
