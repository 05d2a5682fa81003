import type { Infra } from '../../shared/platform/infra.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { precheckUrl } from '../../shared/domains/video/url-check.ts';
import type { WebhookSecret } from '../../shared/contracts/video.ts';
import {
  findEndpointByUrl,
  getOrCreateEndpoint,
  type WebhookEndpointRow,
} from '../../shared/domains/webhooks/endpoints.ts';

/**
 * GET /v1/webhooks/secret: the secret that signs notifications to an address, read only. A GET creates nothing
 * (issue 34): an address with no secret yet is a 404 that says how to get one.
 */
export async function readWebhookSecret(infra: Infra, developerId: string, url: string): Promise<WebhookSecret> {
  const e = await findEndpointByUrl(infra.db, developerId, url);
  if (!e) throw new ApiError('webhook_secret_not_found', {}, 'url');
  return toWebhookSecret(e);
}

/**
 * POST /v1/webhooks/secret: the address's secret, created when it has none (as a job naming the address would),
 * so a developer can set up verification before the first job. Idempotent: the same address keeps its secret.
 */
export async function ensureWebhookSecret(
  infra: Infra,
  developerId: string,
  url: string,
): Promise<{ created: boolean; body: WebhookSecret }> {
  const existing = await findEndpointByUrl(infra.db, developerId, url);
  // The same outbound policy as a job's webhook_url (private and non-http(s) addresses refused).
  if (!existing) await precheckUrl(url, infra.addressPolicy, 'url');
  const e = existing ?? (await getOrCreateEndpoint(infra.db, developerId, url));
  return { created: !existing, body: toWebhookSecret(e) };
}

function toWebhookSecret(e: WebhookEndpointRow): WebhookSecret {
  return { url: e.url, secret: e.secret, createdAt: e.created_at.toISOString(), disabled: e.disabled_at !== null };
}
