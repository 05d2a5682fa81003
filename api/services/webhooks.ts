import type { Infra } from '../../shared/platform/infra.ts';
import { getOrCreateEndpoint } from '../../shared/domains/webhooks/endpoints.ts';

/**
 * The secret that signs notifications to an address. One per (developer, address), created on first use, so a
 * developer can read it before submitting the first job with that webhook_url.
 */
export async function readWebhookSecret(infra: Infra, developerId: string, url: string) {
  const e = await getOrCreateEndpoint(infra.db, developerId, url);
  return { url: e.url, secret: e.secret, created_at: e.created_at.toISOString(), disabled: e.disabled_at !== null };
}
