import { EngineError } from '../../kernel/errors/engine-error.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import type { Logger } from '../../kernel/observability/logger.ts';
import type { Infra } from '../../platform/infra.ts';
import { getOutboundTask, updateOutboundTask } from './store.ts';

export const TWILIO_DEFAULT_BASE = 'https://api.twilio.com';
export const taskPath = (taskId: string, what: 'status' | 'connect' | 'amd') =>
  `/v1/sessions/twilio/task/${encodeURIComponent(taskId)}/${what}`;

/** The Twilio account that places outbound calls; 400 `feature_not_configured` without one. */
export function twilioCreds(infra: Infra): { sid: string; token: string } {
  const sid = infra.config.TWILIO_ACCOUNT_SID;
  const token = infra.config.TWILIO_AUTH_TOKEN;
  if (!sid || !token) {
    throw new ApiError('feature_not_configured', {
      detail: 'Outbound calls need TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN on the server.',
    });
  }
  return { sid, token };
}

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
  const amd = infra.config.TWILIO_MACHINE_DETECTION;
  if (amd !== 'off') {
    // Async: the call connects to the agent at once and the result is POSTed to the amd callback when ready,
    // so a person never waits on detection; our own detector listens in the meantime (shared/domains/realtime/amd).
    form.set('MachineDetection', amd);
    form.set('AsyncAmd', 'true');
    form.set('AsyncAmdStatusCallback', pub + taskPath(taskId, 'amd'));
    form.set('AsyncAmdStatusCallbackMethod', 'POST');
  }
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
    if (!err.retryable) await updateOutboundTask(infra.db, taskId, { status: 'failed', error: `twilio ${res.status}` });
    throw err;
  }
  const call = JSON.parse(text) as { sid?: string; status?: string };
  await updateOutboundTask(infra.db, taskId, { status: call.status ?? 'queued', callSid: call.sid ?? null });
  log.info({ taskId, callSid: call.sid }, 'outbound call placed');
}
