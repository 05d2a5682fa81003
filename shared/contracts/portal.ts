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
