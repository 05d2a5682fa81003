import type { z } from 'zod';

/** Environment variables of the collections area (merged into EnvSchema; documented in the README). */
export const collectionsEnv = {} satisfies z.ZodRawShape;
