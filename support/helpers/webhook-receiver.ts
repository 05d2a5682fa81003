import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  type: string;
  data: Record<string, unknown>;
  id: string;
  /** Whether the delivery carried a Standard Webhooks signature header. */
  signed: boolean;
}

/** A local endpoint that records every webhook delivered to it (204 each), for tests that assert on deliveries. */
export async function startWebhookReceiver(): Promise<{
  url: string;
  received: ReceivedWebhook[];
  close(): Promise<void>;
}> {
  const received: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { type: string; data: Record<string, unknown> };
      received.push({
        ...body,
        id: String(req.headers['webhook-id']),
        signed: typeof req.headers['webhook-signature'] === 'string',
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
