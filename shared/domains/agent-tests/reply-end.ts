import { performance } from 'node:perf_hooks';
import { isReplyEndMark } from '../../contracts/reply-end-mark.ts';
import type { FarEndCaller } from './far-end.ts';

/**
 * When the caller takes an agent's reply as over. The platform ends each complete reply with a mark (`<turn>:end`,
 * docs/realtime.md) that the far end echoes once the audio before it has played: the reply is over when that echo
 * is the last thing on the line (no agent audio came after it and nothing is left to play). That holds however
 * long the platform takes between two sentences of one reply (a starved TTS, a slow tool), where a rule on silence
 * alone hung up in the gap and recorded the reply cut to its first words. An end mark that a `clear` flushed (a
 * tentative stop, a barge-in) does not count: the platform sends it again behind a resumed reply.
 *
 * A reply cut by a `clear` gets no end mark after the cut. Cut, and nothing come since, it is over as every reply
 * was before the end mark: once the line has been quiet for CUT_QUIET_MS (a reply to the speech that cut it, or the
 * rest of a tentative stop resumed, comes sooner and is then waited for like any reply). A caller that says
 * backchannels over the agent stops there; waiting on through the replies to them, each cut by the next, never ends.
 *
 * Without an end mark (a platform from before it) a reply is over once nothing has played and no agent audio has
 * come for QUIET_FALLBACK_MS; a closed call has nothing more to say.
 */
const QUIET_FALLBACK_MS = 6000;
const CUT_QUIET_MS = 1500;

/** What the rule reads of the caller (FarEndCaller has it). */
export type ReplyLine = Pick<
  FarEndCaller,
  'media' | 'clears' | 'playing' | 'lastPlayedMark' | 'lastPlayedMarkAt' | 'closeCode'
>;

/** The far end has played a reply's end mark and no agent audio has come since. */
export function replyEnded(c: ReplyLine): boolean {
  const mark = c.lastPlayedMark;
  return mark !== null && isReplyEndMark(mark) && !c.playing && c.lastPlayedMarkAt >= (c.media.at(-1)?.at ?? 0);
}

/** The agent's reply is over: its end mark has played, or it was cut, or (without either) the line went quiet. */
export function replyOver(c: ReplyLine): boolean {
  if (c.closeCode !== null || replyEnded(c)) return true;
  if (c.playing) return false;
  const lastMedia = c.media.at(-1)?.at ?? 0;
  const quietMs = performance.now() - lastMedia;
  const cut = (c.clears.at(-1) ?? -1) >= lastMedia;
  return quietMs > (cut ? CUT_QUIET_MS : QUIET_FALLBACK_MS);
}
