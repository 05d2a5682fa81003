import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/**
 * Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature: "v1,<base64 HMAC-SHA256 of
 * id.timestamp.body>") through the reference `standardwebhooks` library, so what we sign is exactly what receivers
 * using the spec's own libraries verify. The secret is "whsec_<base64>"; the HMAC key is the decoded part.
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  return new Webhook(secret).sign(id, new Date(timestampSeconds * 1000), body);
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

/**
 * True when any of the space-separated signatures matches and the timestamp is within 5 minutes of now (the
 * library's tolerance, read from the clock). The body is not parsed: tool calls may carry any text.
 */
export function verifyWebhook(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string,
): boolean {
  try {
    new Webhook(secret).verify(
      body,
      { 'webhook-id': headers.id, 'webhook-timestamp': headers.timestamp, 'webhook-signature': headers.signature },
      { jsonParse: false },
    );
    return true;
  } catch (err) {
    if (err instanceof WebhookVerificationError) return false;
    throw err;
  }
}
