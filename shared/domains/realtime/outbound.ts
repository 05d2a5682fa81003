import { isEngineError } from '../../kernel/errors/engine-error.ts';
import { createCall } from '../../engines/telephony/twilio-rest.ts';
import type { Logger } from '../../kernel/observability/logger.ts';
import type { Infra } from '../../platform/infra.ts';
import { getOutboundTask, updateOutboundTask } from './outbound-tasks.ts';
import { twilioAccount } from './twilio-calls.ts';

export const taskPath = (taskId: string, what: 'status' | 'connect' | 'amd') =>
  `/v1/sessions/twilio/task/${encodeURIComponent(taskId)}/${what}`;

/**
 * The dispatcher (the `realtime.dial` job): POST /2010-04-01/Accounts/{sid}/Calls.json (form-encoded, basic auth)
 * with the connect and status callbacks. Twilio fetches TwiML from the connect callback when the callee answers,
 * so the session token is minted then, by the api, not at dial time.
 */
export async function dialTask(infra: Infra, taskId: string, signal: AbortSignal, log: Logger): Promise<void> {
  const task = await getOutboundTask(infra.db, taskId);
  if (!task) {
    log.warn({ taskId }, 'outbound task not found; nothing to dial');
    return;
  }
  if (task.call_sid) return; // dialled already (a retried or stalled job)
  const pub = infra.config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const amd = infra.config.TWILIO_MACHINE_DETECTION;
  let call: { sid: string; status: string };
  try {
    call = await createCall(
      twilioAccount(infra),
      {
        to: task.to_number,
        from: task.from_number,
        url: pub + taskPath(taskId, 'connect'),
        statusCallback: pub + taskPath(taskId, 'status'),
        // Async: our own detector listens in the meantime (shared/domains/realtime/amd).
        ...(amd !== 'off' ? { machineDetection: { mode: amd, callback: pub + taskPath(taskId, 'amd') } } : {}),
      },
      signal,
    );
  } catch (e) {
    if (isEngineError(e) && !e.retryable && e.status !== undefined)
      await updateOutboundTask(infra.db, taskId, { status: 'failed', error: `twilio ${e.status}` });
    throw e;
  }
  await updateOutboundTask(infra.db, taskId, { status: call.status, callSid: call.sid });
  log.info({ taskId, callSid: call.sid }, 'outbound call placed');
}
