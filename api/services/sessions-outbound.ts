import twilio from 'twilio';
import { ApiError } from '../../shared/errors/api-error.ts';
import { EngineError } from '../../shared/engines/core/engine-error.ts';
import { newId } from '../../shared/ids.ts';
import type { Logger } from '../../shared/observability/logger.ts';
import type { Infra } from '../../shared/runtime/infra.ts';
import { createTwilioSession, requireActiveAgent } from './sessions.ts';

export const TWILIO_DEFAULT_BASE = 'https://api.twilio.com';
export const taskPath = (taskId: string, what: 'status' | 'connect') =>
  `/v1/sessions/twilio/task/${encodeURIComponent(taskId)}/${what}`;

function twilioCreds(infra: Infra): { sid: string; token: string } {
  const sid = infra.config.TWILIO_ACCOUNT_SID;
  const token = infra.config.TWILIO_AUTH_TOKEN;
  if (!sid || !token) {
    throw new ApiError('feature_not_configured', {
      detail: 'Outbound calls need TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN on the server.',
    });
  }
  return { sid, token };
}

/** Queues an outbound call; the dispatcher job places it. */
export async function createOutboundTask(
  infra: Infra,
  developerId: string,
  body: { agentId: string; from: string; to: string },
): Promise<{ taskId: string; status: string }> {
  twilioCreds(infra);
  await requireActiveAgent(infra, developerId, body.agentId);
  const taskId = newId('task');
  await infra.db.query(
    `insert into rt_outbound_tasks (id, developer_id, agent_id, from_number, to_number) values ($1, $2, $3, $4, $5)`,
    [taskId, developerId, body.agentId, body.from, body.to],
  );
  await infra.queues.enqueue('realtime.dial', { taskId }, { jobId: taskId });
  return { taskId, status: 'queued' };
}

/**
 * The dispatcher: POST /2010-04-01/Accounts/{sid}/Calls.json (form-encoded, basic auth) with the connect and status
 * callbacks. Twilio fetches TwiML from the connect callback when the callee answers, so the session token is minted
 * then, not at dial time.
 */
export async function dialTask(infra: Infra, taskId: string, signal: AbortSignal, log: Logger): Promise<void> {
  const { rows } = await infra.db.query<{
    id: string;
    from_number: string;
    to_number: string;
    call_sid: string | null;
  }>(`select id, from_number, to_number, call_sid from rt_outbound_tasks where id = $1`, [taskId]);
  const task = rows[0];
  if (!task) {
    log.warn({ taskId }, 'outbound task not found; nothing to dial');
    return;
  }
  if (task.call_sid) return; // dialled already (a retried or stalled job)
  const { sid, token } = twilioCreds(infra);
  const base = (infra.config.TWILIO_API_BASE_URL ?? TWILIO_DEFAULT_BASE).replace(/\/+$/, '');
  const pub = infra.config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const form = new URLSearchParams({
    To: task.to_number,
    From: task.from_number,
    Url: pub + taskPath(taskId, 'connect'),
    Method: 'POST',
    StatusCallback: pub + taskPath(taskId, 'status'),
    StatusCallbackMethod: 'POST',
  });
  for (const ev of ['initiated', 'ringing', 'answered', 'completed']) form.append('StatusCallbackEvent', ev);
  let res: Response;
  try {
    res = await fetch(`${base}/2010-04-01/Accounts/${encodeURIComponent(sid)}/Calls.json`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${sid}:${token}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: form,
      signal,
    });
  } catch (e) {
    throw EngineError.network('twilio', e);
  }
  const text = await res.text();
  if (!res.ok) {
    const err = EngineError.fromStatus('twilio', res.status, text);
    if (!err.retryable) {
      await infra.db.query(
        `update rt_outbound_tasks set status = 'failed', error = $2, updated_at = now() where id = $1`,
        [taskId, `twilio ${res.status}`],
      );
    }
    throw err;
  }
  const call = JSON.parse(text) as { sid?: string; status?: string };
  await infra.db.query(`update rt_outbound_tasks set call_sid = $2, status = $3, updated_at = now() where id = $1`, [
    taskId,
    call.sid ?? null,
    call.status ?? 'queued',
  ]);
  log.info({ taskId, callSid: call.sid }, 'outbound call placed');
}

/** X-Twilio-Signature over the public URL Twilio called plus the sorted POST params (the SDK's validateRequest). */
export function verifyTwilioSignature(
  infra: Infra,
  signature: string | undefined,
  path: string,
  params: Record<string, string>,
): void {
  const token = infra.config.TWILIO_AUTH_TOKEN;
  if (!token) throw new ApiError('feature_not_configured', { detail: 'TWILIO_AUTH_TOKEN is not configured.' });
  const url = infra.config.PUBLIC_BASE_URL.replace(/\/+$/, '') + path;
  if (!signature || !twilio.validateRequest(token, signature, url, params)) {
    throw new ApiError('invalid_signature');
  }
}

async function loadTask(infra: Infra, taskId: string) {
  const { rows } = await infra.db.query<{
    id: string;
    developer_id: string;
    agent_id: string;
    from_number: string;
    to_number: string;
  }>(`select id, developer_id, agent_id, from_number, to_number from rt_outbound_tasks where id = $1`, [taskId]);
  const t = rows[0];
  if (!t) throw ApiError.notFound('task', taskId);
  return t;
}

/** Connect callback: the callee answered; reply with TwiML connecting the call to the agent. */
export async function taskConnect(infra: Infra, taskId: string, params: Record<string, string>): Promise<string> {
  const t = await loadTask(infra, taskId);
  const s = await createTwilioSession(
    infra,
    t.developer_id,
    { agentId: t.agent_id, from: t.from_number, to: t.to_number },
    { direction: 'outbound', taskId },
  );
  await infra.db.query(
    `update rt_outbound_tasks set session_id = $2, status = 'in-progress', call_sid = coalesce(call_sid, $3),
       updated_at = now() where id = $1`,
    [taskId, s.sessionId, params.CallSid ?? null],
  );
  return s.twiml;
}

/** Status callback: record the call's progress (queued → ringing → in-progress → completed/busy/failed/no-answer). */
export async function taskStatus(infra: Infra, taskId: string, params: Record<string, string>): Promise<void> {
  await loadTask(infra, taskId);
  const status = (params.CallStatus ?? 'unknown').slice(0, 40);
  await infra.db.query(
    `update rt_outbound_tasks set status = $2, call_sid = coalesce(call_sid, $3), updated_at = now() where id = $1`,
    [taskId, status, params.CallSid ?? null],
  );
}
