import { withTransaction } from '../../../kernel/db/pool.ts';
import type { Infra } from '../../../platform/infra.ts';
import { enqueueFirstDelivery } from '../../webhooks/delivery.ts';
import { insertWebhookMessage } from '../../webhooks/outbox.ts';
import { copySessionAnswerToTask } from '../outbound-tasks.ts';
import { recordSessionAnsweredBy, sessionEventContext } from '../sessions.ts';
import type { AnsweredBy } from './detector.ts';

/**
 * Records who answered a call (the first decision wins: the platform's detector or Twilio's AMD callback) and,
 * when the call's task names a webhook URL, sends `session.answered_by` once (the outbox dedupes on the session).
 * Returns true when this decision was the first.
 */
export async function recordAnswer(
  infra: Infra,
  sessionId: string,
  a: { answeredBy: AnsweredBy; source: 'detector' | 'twilio'; beepAtMs?: number | null },
): Promise<boolean> {
  const done = await withTransaction(infra.db, async (tx) => {
    const first = await recordSessionAnsweredBy(tx, sessionId, a);
    await copySessionAnswerToTask(tx, sessionId, a.answeredBy);
    if (!first) return { first, messageId: null };
    const s = await sessionEventContext(tx, sessionId);
    if (!s?.webhook_url) return { first, messageId: null };
    const messageId = await insertWebhookMessage(tx, {
      developerId: s.developer_id,
      url: s.webhook_url,
      source: `session_answered_by:${sessionId}`,
      type: 'session.answered_by',
      data: {
        sessionId,
        agentId: s.agent_id,
        taskId: s.task_id,
        callId: s.call_sid,
        answeredBy: s.answered_by,
        beepAtMs: s.beep_at_ms,
        source: s.amd_source,
      },
    });
    return { first, messageId };
  });
  if (done.messageId) await enqueueFirstDelivery(infra, done.messageId);
  return done.first;
}

/** Twilio's AnsweredBy values (PROTOCOLS.md) as the platform's three. A fax is not a person: `machine`. */
export function fromTwilioAnsweredBy(v: string | undefined): AnsweredBy {
  if (v === 'human') return 'human';
  if (v && (v.startsWith('machine') || v === 'fax')) return 'machine';
  return 'unknown';
}
