import { EngineError } from '../../kernel/errors/engine-error.ts';
import type { Infra } from '../../platform/infra.ts';
import { TWILIO_DEFAULT_BASE, twilioCreds } from './outbound.ts';

/** What a live call is made to do instead of streaming to the agent. */
export type CallUpdate = { twiml: string } | { status: 'completed' };

/**
 * Updates a live call through Twilio's REST API (`POST /2010-04-01/Accounts/{sid}/Calls/{CallSid}.json`): new
 * TwiML (a `<Dial>` hands the caller to a person; it ends the media stream) or `Status=completed` (hang up).
 * Network failures and 5xx throw retryable EngineErrors; the caller decides whether to try again.
 */
export async function updateLiveCall(
  infra: Infra,
  callSid: string,
  update: CallUpdate,
  signal?: AbortSignal,
): Promise<void> {
  const { sid, token } = twilioCreds(infra);
  const base = (infra.config.TWILIO_API_BASE_URL ?? TWILIO_DEFAULT_BASE).replace(/\/+$/, '');
  const form = new URLSearchParams('twiml' in update ? { Twiml: update.twiml } : { Status: update.status });
  let res: Response;
  try {
    res = await fetch(
      `${base}/2010-04-01/Accounts/${encodeURIComponent(sid)}/Calls/${encodeURIComponent(callSid)}.json`,
      {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${sid}:${token}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: form,
        signal: signal ?? AbortSignal.timeout(10_000),
      },
    );
  } catch (e) {
    throw EngineError.network('twilio', e);
  }
  const text = await res.text();
  if (!res.ok) throw EngineError.fromStatus('twilio', res.status, text);
}

/** The whisper a warm transfer plays to the person before the caller is put through (`<Number url>`). */
export const whisperPath = (sessionId: string) => `/v1/sessions/twilio/whisper/${encodeURIComponent(sessionId)}`;
