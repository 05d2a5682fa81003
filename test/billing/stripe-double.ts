import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';

export interface StripeRequest {
  method: string;
  path: string;
  form: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * A local Stripe API double on port 0: form-encoded requests in, Stripe-shaped JSON out, for the three calls the
 * platform makes (customers, Checkout sessions, Billing Portal sessions). Records every request.
 */
export async function startStripeDouble(): Promise<{
  url: string;
  requests: StripeRequest[];
  close(): Promise<void>;
}> {
  const requests: StripeRequest[] = [];
  const customersByIdemKey = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const path = (req.url ?? '').split('?')[0]!;
      requests.push({ method: req.method ?? '', path, form, headers: req.headers });
      const send = (status: number, body: unknown) => {
        res.writeHead(status, {
          'content-type': 'application/json',
          'request-id': `req_${randomBytes(6).toString('hex')}`,
        });
        res.end(JSON.stringify(body));
      };
      if (!String(req.headers.authorization ?? '').startsWith('Bearer sk_test_')) {
        return send(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
      }
      if (req.method === 'POST' && path === '/v1/customers') {
        const idem = String(req.headers['idempotency-key'] ?? '');
        const id = customersByIdemKey.get(idem) ?? `cus_${randomBytes(7).toString('hex')}`;
        if (idem) customersByIdemKey.set(idem, id);
        return send(200, { id, object: 'customer', name: form.name ?? null, metadata: {} });
      }
      if (req.method === 'POST' && path === '/v1/checkout/sessions') {
        if (!form['line_items[0][price]']) {
          return send(400, {
            error: { type: 'invalid_request_error', message: 'Missing line_items', param: 'line_items' },
          });
        }
        const id = `cs_test_${randomBytes(12).toString('hex')}`;
        return send(200, {
          id,
          object: 'checkout.session',
          mode: form.mode,
          customer: form.customer,
          url: `https://checkout.stripe.com/c/pay/${id}`,
        });
      }
      if (req.method === 'POST' && path === '/v1/invoiceitems') {
        return send(200, {
          id: `ii_${randomBytes(8).toString('hex')}`,
          object: 'invoiceitem',
          customer: form.customer,
          amount: Number(form.amount),
          currency: form.currency,
        });
      }
      if (req.method === 'POST' && path === '/v1/billing_portal/sessions') {
        const id = `bps_${randomBytes(8).toString('hex')}`;
        return send(200, {
          id,
          object: 'billing_portal.session',
          customer: form.customer,
          return_url: form.return_url,
          url: `https://billing.stripe.com/p/session/${id}`,
        });
      }
      send(404, {
        error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${path})` },
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
