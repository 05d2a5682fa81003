import { performance } from 'node:perf_hooks';
import { isReplyEndMark } from '../../contracts/reply-end-mark.ts';
import type { FarEndCaller } from './far-end.ts';

/**
 * When the caller takes an agent's reply as over. The platform ends each complete reply with a mark (`<turn>:end`,
 * docs/realtime.md) that the far end echoes once the audio before it has played: the reply is over when that echo
 * is the last thing on the line (no agent audio came after it and nothing is left to play). That holds however
 * long the platform takes between two sentences of one reply (a starved TTS, a slow tool), where a rule on silence
 * alone hung up in the gap and recorded the reply cut to its first words. An end mark that a `clear` flushed (a
 * tentative stop, a barge-in) does not count: the platform sends it again behind a resumed reply, and a reply cut by
 * a barge-in is followed by the reply to the speech that cut it.
 *
 * Without an end mark (a platform from before it, or a cut reply that nothing follows) the reply is over once nothing
 * has played and no agent audio has come for QUIET_FALLBACK_MS, and a closed call has nothing more to say.
 */
export const QUIET_FALLBACK_MS = 6000;

/** What the rule reads of the caller (FarEndCaller has it). */
export type ReplyLine = Pick<FarEndCaller, 'media' | 'playing' | 'lastPlayedMark' | 'lastPlayedMarkAt' | 'closeCode'>;

/** The far end has played a reply's end mark and no agent audio has come since. */
export function replyEnded(c: ReplyLine): boolean {
  const mark = c.lastPlayedMark;
  return mark !== null && isReplyEndMark(mark) && !c.playing && c.lastPlayedMarkAt >= (c.media.at(-1)?.at ?? 0);
}

/** The agent's reply is over: its end mark has played, or (without one) the line has been quiet long enough. */
export function replyOver(c: ReplyLine): boolean {
  if (c.closeCode !== null || replyEnded(c)) return true;
  return !c.playing && performance.now() - (c.media.at(-1)?.at ?? 0) > QUIET_FALLBACK_MS;
}
