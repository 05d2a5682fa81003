import { EnvSchema } from '../../shared/kernel/config/schema.ts';

/** One variable of EnvSchema, read from the schema itself so that variables added by any area are covered. */
export interface EnvVar {
  name: string;
  /** No default and not optional: the process refuses to start without it. */
  required: boolean;
  /** The parsed default, or undefined for optional variables without one. */
  defaultValue: unknown;
  description: string | undefined;
  /** Belongs in the Secret, never in the ConfigMap. */
  secret: boolean;
}

/** Keys, passwords, tokens, signing and encryption secrets, and URLs that carry credentials (database, Redis). */
const SECRET_NAME =
  /(_API_KEY|_SECRET|_SECRET_KEY|_SECRET_ACCESS_KEY|_ACCESS_KEY_ID|_PASSWORD|_TOKEN|_PRIVATE_KEY|_ENCRYPTION_KEYS?)$/;
const SECRET_EXACT = new Set(['DATABASE_URL', 'REDIS_URL']);
/** A URL with a user or password in it, e.g. redis://:pass@host. */
const URL_WITH_CREDENTIALS = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*@/i;

export function isSecretName(name: string, defaultValue?: unknown): boolean {
  if (SECRET_EXACT.has(name) || SECRET_NAME.test(name)) return true;
  return typeof defaultValue === 'string' && URL_WITH_CREDENTIALS.test(defaultValue);
}

export function envVars(): EnvVar[] {
  return Object.entries(EnvSchema.shape).map(([name, field]) => {
    const unset = (field as { safeParse(v: unknown): { success: boolean; data?: unknown } }).safeParse(undefined);
    const defaultValue = unset.success ? unset.data : undefined;
    return {
      name,
      required: !unset.success,
      defaultValue,
      description: (field as { description?: string }).description,
      secret: isSecretName(name, defaultValue),
    };
  });
}

/** How a default is written in a manifest (env values are strings; undefined means unset, written as ""). */
export function envString(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
