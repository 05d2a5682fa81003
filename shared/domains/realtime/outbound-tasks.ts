import type { Queryable } from '../../kernel/db/pool.ts';
import type { AnsweredBy } from './amd/detector.ts';

/**
 * Every statement on rt_outbound_tasks: an outbound call from its request (POST /v1/sessions/twilio/outbound)
 * through the dial (the CPU worker's dialler), Twilio's callbacks and answering-machine answer, to the session
 * that took it.
 */

export interface OutboundTaskRow {
  id: string;
  developer_id: string;
  agent_id: string;
  from_number: string;
  to_number: string;
  call_sid: string | null;
  session_id: string | null;
  answered_by: string | null;
  variables: Record<string, string | number | boolean>;
  webhook_url: string | null;
}

export async function insertOutboundTask(
  db: Queryable,
  t: {
    id: string;
    developerId: string;
    agentId: string;
    from: string;
    to: string;
    variables?: Record<string, string | number | boolean>;
    webhookUrl?: string | null;
  },
): Promise<void> {
  await db.query(
    `insert into rt_outbound_tasks (id, developer_id, agent_id, from_number, to_number, variables, webhook_url)
     values ($1, $2, $3, $4, $5, $6, $7)`,
    [t.id, t.developerId, t.agentId, t.from, t.to, JSON.stringify(t.variables ?? {}), t.webhookUrl ?? null],
  );
}

/** Outbound tasks not yet placed, older than `olderThanMs` and younger than `window`: the reconciler's candidates. */
export async function undialledOutboundTasks(db: Queryable, olderThanMs: number, window: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select id from rt_outbound_tasks where status = 'queued' and call_sid is null
        and created_at < now() - make_interval(secs => $1::float / 1000)
        and created_at > now() - $2::interval
      order by created_at limit 100`,
    [olderThanMs, window],
  );
  return rows.map((r) => r.id);
}

/** Fails a task still waiting to be placed (the dispatcher gave up on it); a placed one is left alone. */
export async function failUndialledTask(db: Queryable, id: string, error: string): Promise<void> {
  await db.query(
    `update rt_outbound_tasks set status = 'failed', error = $2, updated_at = now()
      where id = $1 and status = 'queued' and call_sid is null`,
    [id, error],
  );
}

export async function getOutboundTask(db: Queryable, id: string): Promise<OutboundTaskRow | null> {
  const { rows } = await db.query<OutboundTaskRow>(
    `select id, developer_id, agent_id, from_number, to_number, call_sid, session_id, answered_by, variables,
            webhook_url
       from rt_outbound_tasks where id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

/**
 * Twilio's async AMD result, kept on the task (its callback may come before the stream starts); the live
 * session reads it while its own detector listens. Returns the task's session id, if it has one yet.
 */
export async function recordTaskAnsweredBy(db: Queryable, taskId: string, answeredBy: AnsweredBy, twilio: string) {
  const { rows } = await db.query<{ session_id: string | null }>(
    `update rt_outbound_tasks set answered_by = coalesce(answered_by, $2),
            amd_answered_by = coalesce(amd_answered_by, $3), updated_at = now()
      where id = $1 returning session_id`,
    [taskId, answeredBy, twilio.slice(0, 40)],
  );
  return rows[0]?.session_id ?? null;
}

/** Twilio's AMD answer for a task, once its callback came: ours (`machine`) and Twilio's own (`machine_end_beep`). */
export async function taskTwilioAmd(db: Queryable, taskId: string) {
  const { rows } = await db.query<{ answered_by: AnsweredBy; amd_answered_by: string }>(
    `select answered_by, amd_answered_by from rt_outbound_tasks where id = $1 and amd_answered_by is not null`,
    [taskId],
  );
  return rows[0] ?? null;
}

/**
 * Moves a task on: `status` always; `callSid` fills the column once (Twilio's callbacks and the dial response
 * both carry it); `sessionId` when the callee answered; `error` when the dial failed for good.
 */
export async function updateOutboundTask(
  db: Queryable,
  id: string,
  u: { status: string; callSid?: string | null; sessionId?: string; error?: string },
): Promise<void> {
  await db.query(
    `update rt_outbound_tasks set status = $2, call_sid = coalesce(call_sid, $3),
       session_id = coalesce($4, session_id), error = coalesce($5, error), updated_at = now()
     where id = $1`,
    [id, u.status, u.callSid ?? null, u.sessionId ?? null, u.error ?? null],
  );
}

/**
 * The connect callback's session for a task, set once: false when another callback (a replay, or Twilio's retry)
 * attached one first. Keeps a replayed connect from opening a second session for one call.
 */
export async function attachTaskSession(
  db: Queryable,
  id: string,
  u: { sessionId: string; callSid: string | null },
): Promise<boolean> {
  const r = await db.query(
    `update rt_outbound_tasks set status = 'in-progress', session_id = $2, call_sid = coalesce(call_sid, $3),
       updated_at = now()
     where id = $1 and session_id is null`,
    [id, u.sessionId, u.callSid],
  );
  return r.rowCount === 1;
}

/** A session's answer onto its outbound task, unless the task has one already (Twilio's AMD came first). */
export async function copySessionAnswerToTask(db: Queryable, sessionId: string, answeredBy: AnsweredBy): Promise<void> {
  await db.query(
    `update rt_outbound_tasks set answered_by = coalesce(answered_by, $2), updated_at = now() where session_id = $1`,
    [sessionId, answeredBy],
  );
}

/**
 * The webhook URL of an outbound task, as a subquery for one statement of another owner (an answered-by event's
 * context, sessions.ts): `taskId` is its SQL expression.
 */
export function taskWebhookUrlSql(taskId: string): string {
  return `select t.webhook_url from rt_outbound_tasks t where t.id = ${taskId}`;
}
