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
