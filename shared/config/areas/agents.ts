import type { z } from 'zod';

/** Environment variables of the agents area (merged into EnvSchema; documented in the README). */
export const agentsEnv = {} satisfies z.ZodRawShape;
