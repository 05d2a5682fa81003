import { createHash } from 'node:crypto';
import { ConfigError, type Config } from '../../kernel/config/index.ts';
import type { Tier } from './tiers.ts';

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  prices: Record<Tier, string>;
  /** protocol/host/port override for the SDK (a local double in tests). */
  api: { protocol: 'http' | 'https'; host: string; port: number } | null;
}

/**
 * Stripe is an optional feature group: all of it or none of it. A half-configured group fails at boot rather
 * than at the first checkout.
 */
export function stripeSettings(config: Config): StripeSettings | null {
  const group = {
    STRIPE_SECRET_KEY: config.STRIPE_SECRET_KEY,
    STRIPE_WEBHOOK_SECRET: config.STRIPE_WEBHOOK_SECRET,
    STRIPE_PRICE_STARTER: config.STRIPE_PRICE_STARTER,
    STRIPE_PRICE_PRO: config.STRIPE_PRICE_PRO,
    STRIPE_PRICE_SCALE: config.STRIPE_PRICE_SCALE,
  };
  const set = Object.entries(group).filter(([, v]) => v);
  if (set.length === 0) return null;
  if (set.length < Object.keys(group).length) {
    const missing = Object.entries(group)
      .filter(([, v]) => !v)
      .map(([k]) => k);
    throw new ConfigError(
      `Stripe is half-configured: set ${missing.join(', ')} too, or unset every STRIPE_* variable.`,
    );
  }
  let api: StripeSettings['api'] = null;
  if (config.STRIPE_API_BASE) {
    const u = new URL(config.STRIPE_API_BASE);
    const protocol = u.protocol === 'http:' ? 'http' : 'https';
    api = { protocol, host: u.hostname, port: Number(u.port || (protocol === 'http' ? 80 : 443)) };
  }
  return {
    secretKey: group.STRIPE_SECRET_KEY!,
    webhookSecret: group.STRIPE_WEBHOOK_SECRET!,
    prices: { starter: group.STRIPE_PRICE_STARTER!, pro: group.STRIPE_PRICE_PRO!, scale: group.STRIPE_PRICE_SCALE! },
    api,
  };
}

export interface MasterKey {
  id: string;
  key: Buffer;
}

/**
 * The published development master key: anyone can read it here, so it protects nothing. It only lets a
 * development install store keys without setup; NODE_ENV=production refuses to start with it.
 */
export const DEV_MASTER_KEY: MasterKey = {
  id: 'dev',
  key: createHash('sha256').update('vap development provider-key master key (not secret)').digest(),
};

/** Master keys for stored provider keys, current first. */
export function masterKeys(config: Config): MasterKey[] {
  const raw = config.PROVIDER_KEYS_ENCRYPTION_KEYS;
  if (!raw) {
    if (config.NODE_ENV === 'production') {
      throw new ConfigError(
        'PROVIDER_KEYS_ENCRYPTION_KEYS is required in production ("id:<base64 of 32 random bytes>"; generate with ' +
          '`openssl rand -base64 32`).',
      );
    }
    return [DEV_MASTER_KEY];
  }
  const keys = raw.split(',').map((pair) => {
    const i = pair.indexOf(':');
    const id = pair.slice(0, i);
    // Node's base64 decoder reads the standard and the URL-safe alphabet alike.
    const key = Buffer.from(pair.slice(i + 1), 'base64');
    if (key.length !== 32) {
      throw new ConfigError(`PROVIDER_KEYS_ENCRYPTION_KEYS: key "${id}" must decode to 32 bytes, not ${key.length}.`);
    }
    return { id, key };
  });
  if (new Set(keys.map((k) => k.id)).size !== keys.length) {
    throw new ConfigError('PROVIDER_KEYS_ENCRYPTION_KEYS: key ids must be unique.');
  }
  return keys;
}

/** Fails fast on a half-configured billing setup (called when the meter is built at boot). */
export function assertBillingConfig(config: Config): void {
  stripeSettings(config);
  masterKeys(config);
}
