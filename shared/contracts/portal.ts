import { z } from 'zod';

export const OtpBody = z.object({ phone: z.string().min(1).max(40) }).strict();
export const OtpSent = z.object({ sent: z.literal(true), resendAfterSeconds: z.number().int() });

/**
 * How sign-in codes reach the phone, for the login page: `development_sink` sends no SMS (the code goes to the
 * API's log and to `npm run cli -- portal code --phone …`), `sms` texts it, `not_configured` cannot sign anyone in.
 */
export const LoginOptions = z.object({ codeDelivery: z.enum(['development_sink', 'sms', 'not_configured']) });

export const VerifyBody = z
  .object({
    phone: z.string().min(1).max(40),
    code: z
      .string()
      .transform((s) => s.replace(/[\s-]/g, ''))
      .pipe(z.string().regex(/^\d{6}$/, 'the code is 6 digits')),
  })
  .strict();

export const PortalDeveloper = z.object({
  id: z.string(),
  name: z.string(),
  tier: z.string(),
  phone: z.string().nullable(),
});

export const VerifyResult = z.object({
  status: z.enum(['signed_in', 'needs_name']),
  developer: PortalDeveloper.nullable(),
  csrfToken: z.string(),
});

export const SignupBody = z.object({ name: z.string().trim().min(1).max(100) }).strict();
export const SignupResult = z.object({ developer: PortalDeveloper, csrfToken: z.string() });

export const SessionInfo = z.object({
  status: z.enum(['signed_in', 'needs_name']),
  developer: PortalDeveloper.nullable(),
  phone: z.string(),
  csrfToken: z.string(),
  idleExpiresAt: z.string(),
  absoluteExpiresAt: z.string(),
});

export const DailyUsageQuery = z.object({ from: z.string().max(10).optional(), to: z.string().max(10).optional() });
export const DailyUsage = z.object({
  period: z.object({ start: z.string(), end: z.string() }),
  data: z.array(
    z.object({
      date: z.string(),
      category: z.enum(['tts', 'stt', 'llm', 'rag', 'video', 'session']),
      credits: z.number(),
    }),
  ),
});

export const WebhooksQuery = z.object({ reveal: z.enum(['0', '1', 'true', 'false']).optional() });
export const WebhookEndpoint = z.object({
  id: z.string(),
  url: z.string(),
  signingSecret: z.string(),
  disabled: z.boolean(),
  createdAt: z.string(),
});
export const WebhookOverview = z.object({
  signingSecret: z.string().nullable(),
  revealed: z.boolean(),
  endpoints: z.array(WebhookEndpoint),
  deliveries: z.array(
    z.object({
      id: z.string(),
      event: z.string(),
      url: z.string(),
      status: z.enum(['pending', 'delivered', 'failed']),
      attempts: z.number().int(),
      lastStatusCode: z.number().int().nullable(),
      lastError: z.string().nullable(),
      createdAt: z.string(),
      deliveredAt: z.string().nullable(),
    }),
  ),
});

/** The portal's webhook endpoint management: add an address, send it a signed test event, remove it. */
export const WebhookEndpointBody = z.object({ url: z.string().trim().min(1).max(2000) }).strict();
export const WebhookEndpointParams = z.object({ id: z.string().min(1).max(100) });
export const WebhookTestResult = z.object({
  messageId: z.string(),
  /** delivered: the endpoint answered 2xx; pending: it did not, and the event is retried on the usual schedule. */
  status: z.enum(['delivered', 'pending', 'failed']),
  statusCode: z.number().int().nullable(),
});

/** Whether the billing buttons can work here: Stripe Checkout and the customer portal need Stripe configured. */
export const BillingSetup = z.object({ stripeConfigured: z.boolean() });

/** A collection's documents as the portal lists them (where each came from, its size, its chunks). */
export const CollectionDocument = z.object({
  id: z.string(),
  contentType: z.string(),
  /** The file name or label the portal sent as metadata.source, else the source URL; absent when neither. */
  source: z.string().optional(),
  chars: z.number().int(),
  chunks: z.number().int(),
  /** How it was split: one chunk per Markdown heading or Q&A question (`entries`), or by size. */
  split: z.enum(['entries', 'size']),
  createdAt: z.string(),
});
export const CollectionDocumentsParams = z.object({ id: z.string().min(1).max(100) });

/**
 * The voice (TTS) engines an agent may name, and whether each can speak for this developer now: `not-needed` (a
 * self-hosted engine), `platform` (the operator's key, metered), `stored` (the developer's key), `none` (a call
 * on it is refused until a key exists), or `not-installed` (this server has no such engine).
 */
export const VoiceEngineInfo = z.object({
  id: z.string(),
  key: z.enum(['platform', 'stored', 'none', 'not-needed', 'not-installed']),
  usable: z.boolean(),
});
export const VoiceEngineList = z.object({ data: z.array(VoiceEngineInfo) });
