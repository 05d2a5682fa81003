import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signing (webhook-id, webhook-timestamp, webhook-signature: "v1,<base64 HMAC-SHA256 of
 * id.timestamp.body>"). The secret is "whsec_<base64>"; the HMAC key is the decoded part.
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export function webhookHeaders(secret: string, id: string, body: string, now = Date.now()): Record<string, string> {
  const ts = Math.floor(now / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(ts),
    'webhook-signature': signWebhook(secret, id, ts, body),
    'content-type': 'application/json',
  };
}

/** Verifies any of the space-separated signatures, rejecting timestamps more than 5 minutes off. */
export function verifyWebhook(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string,
  now = Date.now(),
): boolean {
  const ts = Number(headers.timestamp);
  if (!Number.isFinite(ts) || Math.abs(now / 1000 - ts) > 300) return false;
  const expected = Buffer.from(signWebhook(secret, headers.id, ts, body));
  return headers.signature.split(' ').some((s) => {
    const got = Buffer.from(s);
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}
