import { END_REASON_WORDS, type SessionEndReason } from '../../shared/contracts/end-reasons.ts';
import type { SessionSummary } from './types.ts';

/**
 * How the calls list and the call page name a call's kind and its state, in one place so both say the same. A
 * call a cap or the balance cut short is never "completed": its state says it was stopped, and its end reason
 * says by what.
 */
export const KIND_WORDS: Record<SessionSummary['kind'], string> = {
  inbound: 'Inbound call',
  outbound: 'Outbound call',
  campaign: 'Campaign call',
  browser: 'Browser call',
  test: 'Agent test',
  replay: 'Call replay',
};

const STOPPED: ReadonlySet<SessionEndReason> = new Set(['max-duration', 'max-credits', 'daily-cap', 'balance']);
const NOT_CONNECTED: ReadonlySet<SessionEndReason> = new Set(['admission', 'start-failed', 'stream-never-connected']);

/** The state badge: its words and its style class. */
export function callState(s: { status: string; endReason?: SessionEndReason }): { words: string; cls: string } {
  if (s.status === 'active') return { words: 'in progress', cls: 'active' };
  if (s.status === 'failed' || (s.endReason && NOT_CONNECTED.has(s.endReason)))
    return { words: 'failed', cls: 'failed' };
  if (s.endReason && STOPPED.has(s.endReason)) return { words: 'stopped at a limit', cls: 'paused' };
  if (s.status === 'completed') return { words: 'completed', cls: 'completed' };
  return { words: s.status, cls: s.status };
}

/** How a call ended, in words (the typed end reason), after which a failed call's stored error says more. */
export function failureReason(s: SessionSummary): string {
  const how = s.endReason ? END_REASON_WORDS[s.endReason] : 'Failed';
  return s.error && s.status === 'failed' ? `${how}: ${s.error}` : how;
}

/**
 * A reply that did not play to its end, in the same words on the waterfall, the transcript and the interruptions
 * list: "the caller barged in" when a barge-in was recorded on that turn, else "cut short" (the call ended, or a
 * limit or the agent's goodbye cut it) — never "interrupted" beside "the caller did not interrupt".
 */
export function cutShortWords(turn: number, bargeInTurns: ReadonlySet<number> | undefined): string {
  return bargeInTurns?.has(turn) ? 'the caller barged in' : 'cut short';
}
