import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { newId } from '../../shared/kernel/ids.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { precheckUrl } from '../../shared/domains/video/url-check.ts';
import { deliverWebhook } from '../../shared/domains/webhooks/delivery.ts';
import {
  deleteEndpoint,
  findEndpoint,
  getOrCreateEndpoint,
  type WebhookEndpointRow,
} from '../../shared/domains/webhooks/endpoints.ts';
import { insertWebhookMessage } from '../../shared/domains/webhooks/outbox.ts';

/** The event type of a portal test notification (receivers can tell it from real ones). */
export const TEST_EVENT = 'webhook.test';

/** A secret shown by its ends only (the full one on request). */
export const maskSecret = (secret: string): string => `${secret.slice(0, 6)}${'•'.repeat(8)}${secret.slice(-4)}`;

const view = (e: WebhookEndpointRow) => ({
  id: e.id,
  url: e.url,
  signingSecret: maskSecret(e.secret),
  disabled: e.disabled_at !== null,
  createdAt: e.created_at.toISOString(),
});

/**
 * Adds an address before any job names it, so its secret can be set up and a test event sent first. The URL is
 * checked against the outbound policy now (a private address is a 400, not a failed delivery later).
 */
export async function addWebhookEndpoint(infra: Infra, developerId: string, url: string) {
  await precheckUrl(url, infra.addressPolicy, 'url');
  return view(await getOrCreateEndpoint(infra.db, developerId, url));
}

export async function removeWebhookEndpoint(infra: Infra, developerId: string, id: string): Promise<void> {
  if (!(await deleteEndpoint(infra.db, developerId, id))) throw ApiError.notFound('webhook endpoint', id);
}

/**
 * Sends one signed `webhook.test` event now, through the same outbox and delivery path as real notifications
 * (Standard Webhooks headers, the endpoint's secret, the outbound policy), and answers with the first attempt's
 * outcome. A failed first attempt is retried on the usual schedule, as a real event would be.
 */
export async function testWebhookEndpoint(infra: Infra, developerId: string, id: string) {
  const endpoint = await findEndpoint(infra.db, developerId, id);
  if (!endpoint) throw ApiError.notFound('webhook endpoint', id);
  const messageId = await insertWebhookMessage(infra.db, {
    developerId,
    url: endpoint.url,
    source: `portal-test:${newId('message')}`,
    type: TEST_EVENT,
    data: { endpointId: endpoint.id, note: 'A test event sent from the developer portal.' },
  });
  const r = await deliverWebhook(infra, messageId!, 1);
  const statusCode = 'statusCode' in r ? (r.statusCode ?? null) : null;
  const status = 'status' in r && r.status ? (r.status as 'delivered' | 'pending' | 'failed') : 'pending';
  return { messageId: messageId!, status, statusCode };
}
