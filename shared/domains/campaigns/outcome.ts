import type { CallOutcome } from '../../kernel/contracts/campaigns.ts';

/** Twilio's AnsweredBy (`human`, `machine_start`, `machine_end_beep`, `fax`, …) or ours, as human | machine | unknown. */
export function normalizeAnsweredBy(v: string | null | undefined): 'human' | 'machine' | 'unknown' | null {
  if (!v) return null;
  if (v === 'human') return 'human';
  if (v === 'machine' || v.startsWith('machine_') || v === 'fax') return 'machine';
  return 'unknown';
}

/** The session end reason (and attempt hang-up reason) of a call hung up because its campaign was canceled. */
export const CAMPAIGN_CANCELED_REASON = 'campaign-canceled';

export interface OutcomeFacts {
  /** Twilio's final CallStatus, or ours for an attempt that was never dialled (`canceled`, `failed`). */
  status: string;
  error: string | null;
  /** The AMD answer: the session's (our detection or Twilio's async AMD) before the status callback's. */
  answeredBy: 'human' | 'machine' | 'unknown' | null;
  sessionId: string | null;
  sessionEndReason: string | null;
  voicemailAction: string | null;
  /** Why the platform hung the call up (`campaign-canceled`), null when it did not. */
  hangupReason?: string | null;
  /** Why the platform refused the answered call (its session cap, the fleet full), null when it did not. */
  requeueReason?: string | null;
}

/** What happened on one attempt, from Twilio's final status and the session (its end reason and AMD answer). */
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
  if (f.sessionEndReason === 'transferred') return { outcome: 'transferred', reason: null };
  // Hung up by the platform because the campaign was canceled, whatever the call had reached.
  if (f.hangupReason === CAMPAIGN_CANCELED_REASON)
    return { outcome: 'canceled', reason: 'the campaign was canceled during the call; it was hung up' };
  if (f.answeredBy === 'machine' || f.sessionEndReason === 'voicemail') {
    // A message counts as left only when the agent is set to leave one (answering-machine handling ends the call
    // with `voicemail` once it has played); otherwise the machine was hung up on and the recipient may be retried.
    const left = f.voicemailAction === 'leave_message' && f.sessionEndReason === 'voicemail';
    return { outcome: left ? 'voicemail_left' : 'voicemail', reason: null };
  }
  // Refused by the platform more often than it re-queues a recipient (settle.ts): the refusal is the reason.
  if (f.requeueReason) return { outcome: 'failed', reason: f.requeueReason };
  if (!f.sessionId) return { outcome: 'failed', reason: 'the call was answered but its media stream never connected' };
  if (f.sessionEndReason === 'admission')
    return { outcome: 'failed', reason: 'admission: the platform was at capacity' };
  return { outcome: 'answered', reason: null };
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
