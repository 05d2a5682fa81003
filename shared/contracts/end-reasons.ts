/**
 * Why a call's session ended: the one list both roles name. The realtime role writes it (`rt_sessions.end_reason`,
 * whose CHECK constraint lists the same values: test/realtime/end-reasons.test.ts holds them equal), campaign
 * settlement reads it to decide an attempt's outcome, and the API, webhooks and the portal show it. Zod-free, like
 * providers.ts, so the portal can import the words without zod reaching its bundle; the schema is
 * `SessionEndReason` in sessions.ts. docs/realtime.md has the table (reason → meaning → campaign outcome).
 */
export const SESSION_END_REASONS = [
  /** The caller hung up (Twilio stopped the stream), or a direct client sent `stop`. */
  'caller-hangup',
  /** The agent ended the call (`end_call`) once its goodbye had played. */
  'agent-ended',
  /** The agent handed the call to a person (`transfer_call`). */
  'transferred',
  /** Outbound: a machine answered and the agent left its voicemail message, played whole. */
  'voicemail-left',
  /** Outbound: a machine answered and the agent hung up without a message (voicemail action `hangup`). */
  'voicemail-hung-up',
  /** The call reached its duration cap (after the goodbye). */
  'max-duration',
  /** The call reached its per-call credit cap (after the goodbye). */
  'max-credits',
  /** The developer's or the API key's daily spending cap ran out (after the goodbye). */
  'daily-cap',
  /** The developer's balance could not fund the next reply (after the goodbye). */
  'balance',
  /** The platform hung the call up because its campaign was canceled. */
  'campaign-canceled',
  /** The realtime fleet was at capacity: the call was refused before it started. */
  'admission',
  /** The session could not start (the stored `error` says why: credits, the agent, an engine). */
  'start-failed',
  /** The session's token expired before any media stream claimed it. */
  'stream-never-connected',
  /** The transport's socket closed without a stop: a dropped connection, or a client that left before the start. */
  'socket-closed',
  /** The transport sent something the platform could not read; the socket was closed. */
  'protocol-error',
  /** The realtime process shut down during the call (its trace and recording were stored). */
  'server-shutdown',
  /** The realtime process running the call stopped without ending it; another process closed it. */
  'worker-lost',
  /** Rows from before typed reasons whose old value had no typed counterpart; the session's `error` keeps it. */
  'error',
] as const;
export type SessionEndReason = (typeof SESSION_END_REASONS)[number];

/** Each reason in words, as the portal's call list and page show it. */
export const END_REASON_WORDS: Record<SessionEndReason, string> = {
  'caller-hangup': 'The caller hung up',
  'agent-ended': 'The agent ended the call',
  transferred: 'Transferred to a person',
  'voicemail-left': 'Voicemail: message left',
  'voicemail-hung-up': 'Voicemail: hung up without a message',
  'max-duration': 'Ended at the call’s duration cap',
  'max-credits': 'Ended at the call’s credit cap',
  'daily-cap': 'Ended at the daily spending cap',
  balance: 'Ended: the balance ran out',
  'campaign-canceled': 'Hung up: the campaign was canceled',
  admission: 'Not admitted: the platform was at capacity',
  'start-failed': 'Could not start',
  'stream-never-connected': 'The media stream never connected',
  'socket-closed': 'The connection closed',
  'protocol-error': 'Ended on a protocol error',
  'server-shutdown': 'Ended: the voice server shut down',
  'worker-lost': 'The voice worker stopped',
  error: 'Ended on an error',
};

/** The reasons a cap or the balance ends a call with (the goodbye plays first). */
export type LimitEndReason = Extract<SessionEndReason, 'max-duration' | 'max-credits' | 'daily-cap' | 'balance'>;
