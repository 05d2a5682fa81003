import type { z } from 'zod';

/** Environment variables of the billing area (merged into EnvSchema; documented in the README). */
export const billingEnv = {} satisfies z.ZodRawShape;
