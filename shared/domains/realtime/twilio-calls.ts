import { ApiError } from '../../kernel/errors/api-error.ts';
import { updateCall, type CallUpdate, type TwilioAccount } from '../../engines/telephony/twilio-rest.ts';
import type { Infra } from '../../platform/infra.ts';

/**
 * The Twilio account that places and changes calls (outbound calls, campaigns, transfers and hang-ups);
 * 400 `feature_not_configured` without one.
 */
export function twilioAccount(infra: Infra): TwilioAccount {
  const sid = infra.config.TWILIO_ACCOUNT_SID;
  const token = infra.config.TWILIO_AUTH_TOKEN;
  if (!sid || !token) {
    throw new ApiError('feature_not_configured', {
      detail: 'Outbound calls need TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN on the server.',
    });
  }
  return { baseUrl: infra.config.TWILIO_API_BASE_URL, sid, token };
}

/**
 * Updates a live call through Twilio's REST API: new TwiML or `Status=completed` (engines/telephony/twilio-rest.ts).
 * Without the caller's own signal it gives up after 10 s. Network failures and 5xx throw retryable EngineErrors;
 * the caller decides whether to try again.
 */
export async function updateLiveCall(
  infra: Infra,
  callSid: string,
  update: CallUpdate,
  signal?: AbortSignal,
): Promise<void> {
  await updateCall(twilioAccount(infra), callSid, update, signal ?? AbortSignal.timeout(10_000));
}

/** The whisper a warm transfer plays to the person before the caller is put through (`<Number url>`). */
export const whisperPath = (sessionId: string) => `/v1/sessions/twilio/whisper/${encodeURIComponent(sessionId)}`;
