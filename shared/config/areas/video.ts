import type { z } from 'zod';

/** Environment variables of the video area (merged into EnvSchema; documented in the README). */
export const videoEnv = {} satisfies z.ZodRawShape;
