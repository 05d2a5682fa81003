import type { z } from 'zod';

/** Environment variables of the speech area (merged into EnvSchema; documented in the README). */
export const speechEnv = {} satisfies z.ZodRawShape;
