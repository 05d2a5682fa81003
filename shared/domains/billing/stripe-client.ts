import Stripe from 'stripe';
import type { Config } from '../../kernel/config/index.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { stripeSettings, type StripeSettings } from '../../platform/metering/settings.ts';

export interface StripeBilling {
  stripe: Stripe;
  settings: StripeSettings;
}

const memo = new WeakMap<Config, StripeBilling | null>();

/** The Stripe SDK client of this install, or null when Stripe is not configured. */
export function stripeBilling(config: Config): StripeBilling | null {
  if (memo.has(config)) return memo.get(config)!;
  const settings = stripeSettings(config);
  const billing = settings
    ? {
        settings,
        stripe: new Stripe(settings.secretKey, {
          maxNetworkRetries: 2,
          timeout: 20_000,
          telemetry: false,
          ...(settings.api ?? {}),
        }),
      }
    : null;
  memo.set(config, billing);
  return billing;
}

/** Like stripeBilling, but a missing configuration is the 503 every billing route answers. */
export function requireStripe(config: Config): StripeBilling {
  const b = stripeBilling(config);
  if (!b) throw new ApiError('billing_not_configured');
  return b;
}

/** Stripe failures as API errors: unreachable → 503, anything Stripe refuses → 502 (never the vendor's secret). */
export function stripeFailure(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const err = e as { type?: string; statusCode?: number; message?: string };
  if (err.type === 'StripeConnectionError') return new ApiError('dependency_unavailable', { dependency: 'Stripe' });
  return new ApiError('upstream_error', {
    provider: 'stripe',
    detail: err.statusCode ? `HTTP ${err.statusCode} (${err.type ?? 'error'})` : 'request failed',
  });
}
