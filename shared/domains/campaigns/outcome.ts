import type { CallOutcome } from '../../contracts/campaigns.ts';
import type { SessionEndReason } from '../../contracts/sessions.ts';

/** Twilio's AnsweredBy (`human`, `machine_start`, `machine_end_beep`, `fax`, …) or ours, as human | machine | unknown. */
export function normalizeAnsweredBy(v: string | null | undefined): 'human' | 'machine' | 'unknown' | null {
  if (!v) return null;
  if (v === 'human') return 'human';
  if (v === 'machine' || v.startsWith('machine_') || v === 'fax') return 'machine';
  return 'unknown';
}

/** The session end reason (and attempt hang-up reason) of a call hung up because its campaign was canceled. */
export const CAMPAIGN_CANCELED_REASON = 'campaign-canceled' satisfies SessionEndReason;

export interface OutcomeFacts {
  /** Twilio's final CallStatus, or ours for an attempt that was never dialled (`canceled`, `failed`). */
  status: string;
  error: string | null;
  /** The AMD answer: the session's (our detection or Twilio's async AMD) before the status callback's. */
  answeredBy: 'human' | 'machine' | 'unknown' | null;
  sessionId: string | null;
  /** How the session ended, as the realtime role recorded it on the call: the one source of what happened. */
  sessionEndReason: SessionEndReason | null;
  /** Why the platform hung the call up (`campaign-canceled`), null when it did not. */
  hangupReason?: string | null;
  /** Why the platform refused the answered call (its session cap, the fleet full), null when it did not. */
  requeueReason?: string | null;
}

/**
 * Why the platform, not the people on the call, ended it: the attempt's `outcomeReason` (after the reason's name),
 * so a capped or broken call never reads as a plain answer. Reasons absent here are what the call itself did.
 */
const ENDED_BY_PLATFORM: Partial<Record<SessionEndReason, string>> = {
  'max-duration': 'the call reached its duration cap',
  'max-credits': 'the call reached its credit cap',
  'daily-cap': 'the daily spending cap ran out during the call',
  balance: 'the balance ran out during the call',
  admission: 'the platform was at capacity',
  'start-failed': 'the session could not start',
  'protocol-error': 'the media stream sent something the platform could not read',
  'server-shutdown': 'the voice server shut down during the call',
  'worker-lost': 'the voice worker running the call stopped',
  error: 'the call ended on an error',
};

/** Session end reasons after which the call never reached a conversation: the attempt failed. */
const NEVER_STARTED: ReadonlySet<SessionEndReason> = new Set(['admission', 'start-failed']);

/**
 * What happened on one attempt, from Twilio's final status and the session: its end reason (which says whether a
 * voicemail message was left) and AMD answer. Nothing here reads the agent: an agent edited after the call does not
 * change what happened on it.
 */
export function decideOutcome(f: OutcomeFacts): { outcome: CallOutcome; reason: string | null } {
  switch (f.status) {
    case 'busy':
      return { outcome: 'busy', reason: null };
    case 'no-answer':
      return { outcome: 'no_answer', reason: null };
    case 'canceled':
      return { outcome: 'canceled', reason: f.error ?? 'canceled before it was answered' };
    case 'completed':
      break;
    default:
      return { outcome: 'failed', reason: f.error ?? `twilio status ${f.status}` };
  }
  const end = f.sessionEndReason;
  if (end === 'transferred') return { outcome: 'transferred', reason: null };
  // Hung up by the platform because the campaign was canceled, whatever the call had reached.
  if (f.hangupReason === CAMPAIGN_CANCELED_REASON)
    return { outcome: 'canceled', reason: 'the campaign was canceled during the call; it was hung up' };
  const words = end ? ENDED_BY_PLATFORM[end] : undefined;
  const reason = end && words ? `${end}: ${words}` : null;
  // A message counts as left only when the session says it played whole (`voicemail-left`); a machine hung up on,
  // or one whose message a cap cut, is `voicemail`, which a campaign may retry.
  if (end === 'voicemail-left') return { outcome: 'voicemail_left', reason: null };
  if (f.answeredBy === 'machine' || end === 'voicemail-hung-up') return { outcome: 'voicemail', reason };
  // Refused by the platform more often than it re-queues a recipient (settle.ts): the refusal is the reason.
  if (f.requeueReason) return { outcome: 'failed', reason: f.requeueReason };
  if (!f.sessionId) return { outcome: 'failed', reason: 'the call was answered but its media stream never connected' };
  if (end && NEVER_STARTED.has(end)) return { outcome: 'failed', reason };
  return { outcome: 'answered', reason };
}

/** When to try again (null: the outcome is final): retryable outcomes back off, doubling per attempt. */
export function retryAt(
  outcome: CallOutcome,
  attempt: number,
  retry: { maxAttempts: number; backoffSeconds: number; on: string[] },
  now = Date.now(),
): Date | null {
  if (!retry.on.includes(outcome) || attempt >= retry.maxAttempts) return null;
  return new Date(now + retry.backoffSeconds * 1000 * 2 ** (attempt - 1));
}
