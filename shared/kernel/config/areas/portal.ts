import { z } from 'zod';
import { ConfigError, envInt } from '../env.ts';

export const OTP_SENDERS = ['dev-log', 'twilio-messaging'] as const;
export type OtpSenderKind = (typeof OTP_SENDERS)[number];

/** Environment variables of the developer portal (merged into EnvSchema; documented in docs/portal.md). */
export const portalEnv = {
  PORTAL_SECRET: z
    .string()
    .min(32)
    .optional()
    .describe(
      'Server secret (≥ 32 chars) keying the HMAC of portal sign-in codes and of phone numbers in Redis keys. ' +
        'Unset: a random secret is made once and kept in Postgres (portal_settings), shared by every process.',
    ),
  PORTAL_OTP_SENDER: z
    .enum(OTP_SENDERS)
    .optional()
    .describe(
      'How portal sign-in codes are delivered: dev-log (written to the log, readable with `npm run cli -- portal ' +
        'code`) or twilio-messaging (SMS). Unset: dev-log outside production; in production sign-in answers 503.',
    ),
  PORTAL_ALLOW_DEV_OTP_IN_PRODUCTION: z
    .literal('dev-log')
    .optional()
    .describe(
      'Set to "dev-log" to allow PORTAL_OTP_SENDER=dev-log with NODE_ENV=production (anyone reading the log can ' +
        'sign in as anyone); otherwise that combination refuses to start.',
    ),
  PORTAL_TWILIO_FROM: z
    .string()
    .regex(/^(\+[1-9]\d{6,14}|MG[0-9a-fA-F]{32})$/, 'an E.164 number (+…) or a Messaging Service SID (MG…)')
    .optional()
    .describe(
      'twilio-messaging: the sender, an E.164 number or a Messaging Service SID (MG…). Uses TWILIO_ACCOUNT_SID, ' +
        'TWILIO_AUTH_TOKEN and TWILIO_API_BASE_URL.',
    ),
  PORTAL_OTP_TTL_SECONDS: envInt(60, 3600).default(600).describe('How long a portal sign-in code is valid.'),
  PORTAL_OTP_RESEND_SECONDS: envInt(0, 600)
    .default(30)
    .describe('Cooldown before another sign-in code may be sent to the same phone.'),
  PORTAL_OTP_SENDS_PER_PHONE_PER_HOUR: envInt(1, 1000)
    .default(5)
    .describe('Sign-in codes sent to one phone per hour (fixed window).'),
  PORTAL_OTP_SENDS_PER_IP_PER_HOUR: envInt(1, 100_000)
    .default(20)
    .describe('Sign-in codes requested from one client IP per hour (fixed window).'),
  PORTAL_SESSION_IDLE_MINUTES: envInt(1, 7 * 24 * 60)
    .default(120)
    .describe('A portal session ends after this long without a request.'),
  PORTAL_SESSION_ABSOLUTE_HOURS: envInt(1, 90 * 24)
    .default(24)
    .describe('A portal session ends this long after sign-in, however active.'),
  PORTAL_DIST_DIR: z
    .string()
    .default('portal/dist')
    .describe('Folder of the built portal (index.html, assets/) served under /portal/.'),
} satisfies z.ZodRawShape;

type PortalEnv = { [K in keyof typeof portalEnv]?: z.infer<(typeof portalEnv)[K]> } & {
  NODE_ENV: string;
  TWILIO_ACCOUNT_SID?: string | undefined;
  TWILIO_AUTH_TOKEN?: string | undefined;
};

/**
 * The sender the portal uses, or null when sign-in is off (production without a sender). Refuses, naming the
 * variable, a half-configured Twilio sender and the development sink in production without the operator's opt-in.
 */
export function portalOtpSender(env: PortalEnv): OtpSenderKind | null {
  const kind = env.PORTAL_OTP_SENDER ?? (env.NODE_ENV === 'production' ? null : 'dev-log');
  if (kind === 'dev-log' && env.NODE_ENV === 'production' && env.PORTAL_ALLOW_DEV_OTP_IN_PRODUCTION !== 'dev-log') {
    throw new ConfigError(
      'Invalid configuration:\n  PORTAL_OTP_SENDER: dev-log writes sign-in codes to the log and is refused with ' +
        'NODE_ENV=production; configure twilio-messaging, or opt in with PORTAL_ALLOW_DEV_OTP_IN_PRODUCTION=dev-log',
    );
  }
  if (kind === 'twilio-messaging') {
    const missing = (['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'PORTAL_TWILIO_FROM'] as const).filter((k) => !env[k]);
    if (missing.length) {
      throw new ConfigError(
        `Invalid configuration:\n${missing.map((k) => `  ${k}: required by PORTAL_OTP_SENDER=twilio-messaging`).join('\n')}`,
      );
    }
  }
  return kind;
}
