import type { z } from 'zod';

/** Environment variables of the realtime area (merged into EnvSchema; documented in the README). */
export const realtimeEnv = {} satisfies z.ZodRawShape;
