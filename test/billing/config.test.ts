import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { masterKeys, stripeSettings } from '../../shared/platform/metering/settings.ts';
import { tierPlans } from '../../shared/platform/metering/tiers.ts';
import { creditWeights } from '../../shared/platform/metering/weights.ts';
import { ConfigError, EnvSchema, loadConfig } from '../../shared/kernel/config/index.ts';

describe('billing configuration', () => {
  it('documents every billing variable', () => {
    const billingVars = Object.keys(EnvSchema.shape).filter((k) =>
      /^(TIER_|STRIPE_|CREDIT_WEIGHTS|USAGE_CACHE_MS|PROVIDER_KEYS_)/.test(k),
    );
    expect(billingVars.length).toBeGreaterThanOrEqual(17);
    for (const k of billingVars) {
      expect(EnvSchema.shape[k as keyof typeof EnvSchema.shape].description, k).toBeTruthy();
    }
  });

  it('reads tiers from the environment', () => {
    const plans = tierPlans(loadConfig({ TIER_PRO_MONTHLY_CREDITS: '123', TIER_SCALE_CARRYOVER_MONTHS: '6' }));
    expect(plans.starter).toMatchObject({ monthlyCredits: 50_000, overageRate: 0, carryoverMonths: 0 });
    expect(plans.pro).toMatchObject({ monthlyCredits: 123, overageRate: 0.6, carryoverMonths: 1, display: 'Pro' });
    expect(plans.scale.carryoverMonths).toBe(6);
    expect(() => loadConfig({ TIER_PRO_MONTHLY_CREDITS: '-5' })).toThrow(ConfigError);
  });

  it('treats Stripe as all or nothing', () => {
    expect(stripeSettings(loadConfig({}))).toBeNull();
    expect(() => stripeSettings(loadConfig({ STRIPE_SECRET_KEY: 'sk_test_1' }))).toThrow(
      /STRIPE_WEBHOOK_SECRET, STRIPE_PRICE_STARTER, STRIPE_PRICE_PRO, STRIPE_PRICE_SCALE/,
    );
    const full = stripeSettings(
      loadConfig({
        STRIPE_SECRET_KEY: 'sk_test_1',
        STRIPE_WEBHOOK_SECRET: 'whsec_1',
        STRIPE_PRICE_STARTER: 'price_s',
        STRIPE_PRICE_PRO: 'price_p',
        STRIPE_PRICE_SCALE: 'price_x',
        STRIPE_API_BASE: 'http://127.0.0.1:12111',
      }),
    );
    expect(full).toMatchObject({
      prices: { pro: 'price_p' },
      api: { protocol: 'http', host: '127.0.0.1', port: 12111 },
    });
  });

  it('requires real master keys in production and parses rotation lists', () => {
    expect(masterKeys(loadConfig({}))[0]!.id).toBe('dev');
    expect(() => masterKeys(loadConfig({ NODE_ENV: 'production' }))).toThrow(/PROVIDER_KEYS_ENCRYPTION_KEYS/);
    const a = randomBytes(32).toString('base64');
    const b = randomBytes(32).toString('base64url');
    const keys = masterKeys(loadConfig({ PROVIDER_KEYS_ENCRYPTION_KEYS: `k2:${b},k1:${a}` }));
    expect(keys.map((k) => [k.id, k.key.length])).toEqual([
      ['k2', 32],
      ['k1', 32],
    ]);
    expect(() => masterKeys(loadConfig({ PROVIDER_KEYS_ENCRYPTION_KEYS: 'k1:c2hvcnQ=' }))).toThrow(/32 bytes/);
  });

  it('weighs credits with ceil, a minimum of 1, and overrides', () => {
    const w = creditWeights(loadConfig({ CREDIT_WEIGHTS: 'synthesize:2,llm:0.5,search:0' }));
    expect(w.credits('tts', 'synthesize', 10)).toBe(20);
    expect(w.credits('llm', 'chat', 30)).toBe(3); // the operation entry (0.1) wins over the category override
    expect(w.credits('llm', 'session.llm', 3)).toBe(2); // category override 0.5 → 1.5 → 2
    expect(w.credits('rag', 'ingest', 1)).toBe(1); // 0.02 rounds up to the minimum of 1
    expect(w.credits('rag', 'search', 5)).toBe(0);
    expect(w.credits('tts', 'synthesize', 0)).toBe(0);
  });
});
