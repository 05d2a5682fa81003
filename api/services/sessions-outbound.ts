import twilio from 'twilio';
import type { CreateOutboundCallBody } from '../../shared/contracts/sessions.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { newId } from '../../shared/kernel/ids.ts';
import { fromTwilioAnsweredBy, recordAnswer } from '../../shared/domains/realtime/amd/outcome.ts';
import { twilioAccount } from '../../shared/domains/realtime/twilio-calls.ts';
import {
  attachTaskSession,
  getOutboundTask,
  insertOutboundTask,
  recordTaskAnsweredBy,
  updateOutboundTask,
} from '../../shared/domains/realtime/outbound-tasks.ts';
import { deletePendingSession, sessionTokenFields, sessionTransfer } from '../../shared/domains/realtime/sessions.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { createTwilioSession, requireActiveAgent, twilioSessionAnswer } from './sessions.ts';

/** Queues an outbound call; the dispatcher job (shared/domains/realtime/outbound.ts, on the CPU worker) places it. */
export async function createOutboundTask(
  infra: Infra,
  developerId: string,
  body: CreateOutboundCallBody,
): Promise<{ taskId: string; status: string }> {
  twilioAccount(infra);
  await requireActiveAgent(infra, developerId, body.agentId);
  const taskId = newId('task');
  await insertOutboundTask(infra.db, {
    id: taskId,
    developerId,
    agentId: body.agentId,
    from: body.from,
    to: body.to,
    variables: body.variables,
    webhookUrl: body.webhookUrl,
  });
  await infra.queues.enqueue('realtime.dial', { taskId }, { jobId: taskId });
  return { taskId, status: 'queued' };
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
  const t = await getOutboundTask(infra.db, taskId);
  if (!t) throw ApiError.notFound('task', taskId);
  return t;
}

/**
 * Connect callback: the callee answered; reply with TwiML connecting the call to the agent. Idempotent by CallSid:
 * a replayed or retried callback for the task's call answers the session the first one opened (a fresh token for
 * it, which still opens it only once), never a second session; another CallSid for the same task is a 409.
 */
export async function taskConnect(infra: Infra, taskId: string, params: Record<string, string>): Promise<string> {
  const t = await loadTask(infra, taskId);
  const callSid = params.CallSid ?? null;
  if (t.session_id) return answerAgain(infra, t, callSid);
  const s = await createTwilioSession(
    infra,
    t.developer_id,
    { agentId: t.agent_id, from: t.from_number, to: t.to_number },
    { direction: 'outbound', taskId },
  );
  if (await attachTaskSession(infra.db, taskId, { sessionId: s.sessionId, callSid })) return s.twiml;
  // Another callback for this call won the race: drop ours and answer theirs.
  await deletePendingSession(infra.db, s.sessionId);
  return answerAgain(infra, await loadTask(infra, taskId), callSid);
}

/**
 * A replayed connect callback of a call that has its session already: the same session's TwiML (a fresh token for
 * it, which still opens it only once); 409 for another CallSid. Campaign attempts answer replays the same way.
 */
export async function answerAgain(
  infra: Infra,
  t: { session_id: string | null; call_sid: string | null },
  callSid: string | null,
): Promise<string> {
  if (t.call_sid && callSid && t.call_sid !== callSid) {
    throw new ApiError('conflict', { detail: 'This task is connected to another call.' });
  }
  const row = t.session_id ? await sessionTokenFields(infra.db, t.session_id) : null;
  if (!row?.expires_at) throw new ApiError('conflict', { detail: 'This task has no session to connect.' });
  const answer = await twilioSessionAnswer(infra, {
    sid: t.session_id!,
    dev: row.developer_id,
    agt: row.agent_id,
    ch: 'twilio',
    exp: Math.floor(row.expires_at.getTime() / 1000),
    ...(row.from_number ? { from: row.from_number } : {}),
    ...(row.to_number ? { to: row.to_number } : {}),
    ...(row.instance_id ? { ins: row.instance_id } : {}),
    ...(row.task_id ? { tsk: row.task_id } : {}),
  });
  return answer.twiml;
}

/** Status callback: record the call's progress (queued → ringing → in-progress → completed/busy/failed/no-answer). */
export async function taskStatus(infra: Infra, taskId: string, params: Record<string, string>): Promise<void> {
  await loadTask(infra, taskId);
  const status = (params.CallStatus ?? 'unknown').slice(0, 40);
  await updateOutboundTask(infra.db, taskId, { status, callSid: params.CallSid ?? null });
}

/**
 * Async AMD callback (AsyncAmdStatusCallback): Twilio's AnsweredBy for the call. Kept on the task (it may come
 * before the stream starts) and, once the session exists, on the session; the live session reads it (first
 * answer wins against the platform's own detector).
 */
export async function taskAmd(infra: Infra, taskId: string, params: Record<string, string>): Promise<void> {
  await loadTask(infra, taskId);
  const answeredBy = fromTwilioAnsweredBy(params.AnsweredBy);
  const sessionId = await recordTaskAnsweredBy(infra.db, taskId, answeredBy, params.AnsweredBy ?? 'unknown');
  if (sessionId) await recordAnswer(infra, sessionId, { answeredBy, source: 'twilio' });
}

/**
 * Warm transfer whisper (the `<Number url>` of the transfer's `<Dial>`): TwiML Twilio plays to the person
 * before the caller is put through: who is calling and the agent's summary of why.
 */
export async function transferWhisper(infra: Infra, sessionId: string): Promise<string> {
  const s = await sessionTransfer(infra.db, sessionId);
  if (!s?.transfer) throw ApiError.notFound('session', sessionId);
  const who =
    s.direction === 'outbound' ? 'a call the assistant placed' : `a call from ${s.from_number ?? 'an unknown number'}`;
  const vr = new twilio.twiml.VoiceResponse();
  vr.say(`Transferring ${who}. ${s.transfer.summary}`.slice(0, 1500));
  return vr.toString();
}
