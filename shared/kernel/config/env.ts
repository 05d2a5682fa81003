import { z } from 'zod';

/** Thrown when the environment fails validation; the message names every bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Booleans from env strings: only the usual spellings count, anything else is a config error. */
export const envBool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

export const envInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** Parses `process.env` (or a given record) against a schema, failing fast with a readable message. */
export function parseEnv<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): z.infer<S> {
  // Empty strings mean "unset": shells and manifests often export VAR= to blank a value.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}
