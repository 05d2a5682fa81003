import type { Redis } from 'ioredis';
import { sendMessage, type TwilioAccount } from '../../engines/telephony/twilio-rest.ts';
import type { Config } from '../../kernel/config/index.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import type { Logger } from '../../kernel/observability/logger.ts';

/** Delivers a sign-in code to a phone. Adapters: the development sink and Twilio Messaging (SMS). */
export interface OtpSender {
  readonly kind: string;
  send(phone: string, code: string, ttlSeconds: number): Promise<void>;
}

/** Twilio refused the destination of a number that parses: what the user can check. */
const SMS_REFUSED =
  'The SMS could not be sent to this number. Check that it is a mobile number in international (E.164) form, e.g. +1 415 555 0100.';

const devKey = (prefix: string, phone: string) => `${prefix}:portal:devotp:${phone}`;

/**
 * Development sink: the code goes to the log and to Redis, where `npm run cli -- portal code --phone …` and tests
 * read it. Anyone with the log can sign in as anyone, hence refused in production without the operator's opt-in
 * (shared/kernel/config/areas/portal.ts).
 */
export function devLogSender(redis: Redis, prefix: string, log: Logger): OtpSender {
  return {
    kind: 'dev-log',
    async send(phone, code, ttlSeconds) {
      await redis.set(devKey(prefix, phone), code, 'EX', ttlSeconds);
      log.info({ phone, code }, 'portal sign-in code (development sink)');
    },
  };
}

/** The last code the development sink delivered to `phone`, or null (none, or expired). */
export async function readDevOtp(redis: Redis, prefix: string, phone: string): Promise<string | null> {
  return redis.get(devKey(prefix, phone));
}

/** The whole send, retries included (the vendor client's header deadline bounds each attempt). */
const SEND_DEADLINE_MS = 30_000;

/**
 * Twilio Messaging: one SMS through the Messages API (engines/telephony/twilio-rest.ts), from a number or a
 * Messaging Service, never sent twice blindly (two texts with the same code).
 */
export function twilioMessagingSender(config: Config, log: Logger): OtpSender {
  const account: TwilioAccount = {
    baseUrl: config.TWILIO_API_BASE_URL,
    sid: config.TWILIO_ACCOUNT_SID!,
    token: config.TWILIO_AUTH_TOKEN!,
  };
  const from = config.PORTAL_TWILIO_FROM!;
  return {
    kind: 'twilio-messaging',
    async send(phone, code, ttlSeconds) {
      const minutes = Math.round(ttlSeconds / 60);
      try {
        const msg = await sendMessage(
          account,
          {
            to: phone,
            from,
            body: `${code} is your developer portal sign-in code. It expires in ${minutes} minutes. Do not share it.`,
          },
          AbortSignal.timeout(SEND_DEADLINE_MS),
        );
        // The code is never logged; the message sid lets an operator find the SMS in Twilio's console.
        log.info({ messageSid: msg.sid }, 'portal sign-in code sent by SMS');
      } catch (e) {
        const status = e instanceof EngineError ? e.status : undefined;
        log.warn({ status, err: (e as Error).message }, 'portal sign-in SMS failed');
        // Twilio's 400s are about the destination (e.g. 21211 invalid "To"); the caller can fix those.
        if (status === 400) throw new ApiError('invalid_phone_number', { detail: SMS_REFUSED }, 'phone');
        throw new ApiError('upstream_error', {
          provider: 'twilio',
          detail: 'the SMS could not be sent; retry shortly',
        });
      }
    },
  };
}

export function createOtpSender(config: Config, redis: Redis, log: Logger): OtpSender | null {
  if (config.portalOtpSender === 'twilio-messaging') return twilioMessagingSender(config, log);
  if (config.portalOtpSender === 'dev-log') return devLogSender(redis, config.REDIS_PREFIX, log);
  return null;
}
