import { z } from 'zod';

export const OtpBody = z.object({ phone: z.string().min(1).max(40) }).strict();
export const OtpSent = z.object({ sent: z.literal(true), resendAfterSeconds: z.number().int() });

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
export const WebhookOverview = z.object({
  signingSecret: z.string().nullable(),
  revealed: z.boolean(),
  endpoints: z.array(
    z.object({
      id: z.string(),
      url: z.string(),
      signingSecret: z.string(),
      disabled: z.boolean(),
      createdAt: z.string(),
    }),
  ),
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
