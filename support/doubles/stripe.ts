import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { startHttpDouble, type RecordedRequest } from '../../shared/domains/agent-tests/simulators/http-double.ts';

/** A recorded request with its form-encoded body parsed, as Stripe reads it. */
export interface StripeRequest extends RecordedRequest {
  form: Record<string, string>;
}

export interface StripeDouble {
  url: string;
  /** Every request received, oldest first. */
  readonly requests: StripeRequest[];
  close(): Promise<void>;
}

const requestId = () => `req_${randomBytes(6).toString('hex')}`;

/**
 * Stripe's REST API: form-encoded `POST /v1/customers` (idempotent on `Idempotency-Key`), `/v1/checkout/sessions`,
 * `/v1/invoiceitems` and `/v1/billing_portal/sessions`; Stripe-shaped JSON with a `Request-Id` header. Bearer auth
 * with any `sk_test_` key; errors `{error: {type, message, param?}}`.
 */
export async function startStripeDouble(): Promise<StripeDouble> {
  const customersByIdemKey = new Map<string, string>();
  const send = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId() }).end(JSON.stringify(body));
  const d = await startHttpDouble(
    {
      name: 'stripe',
      errorBody: (status, message) => ({
        body: JSON.stringify({
          error: { type: 'invalid_request_error', message: status === 401 ? 'Invalid API Key provided' : message },
        }),
        headers: { 'request-id': requestId() },
      }),
      authorize: (req) => String(req.headers.authorization ?? '').startsWith('Bearer sk_test_'),
      route(req, res) {
        if (req.method !== 'POST') return false;
        const form = formOf(req);
        if (req.path === '/v1/customers') {
          const idem = String(req.headers['idempotency-key'] ?? '');
          const id = customersByIdemKey.get(idem) ?? `cus_${randomBytes(7).toString('hex')}`;
          if (idem) customersByIdemKey.set(idem, id);
          send(res, 200, { id, object: 'customer', name: form.name ?? null, metadata: {} });
          return true;
        }
        if (req.path === '/v1/checkout/sessions') {
          if (!form['line_items[0][price]']) {
            send(res, 400, {
              error: { type: 'invalid_request_error', message: 'Missing line_items', param: 'line_items' },
            });
            return true;
          }
          const id = `cs_test_${randomBytes(12).toString('hex')}`;
          send(res, 200, {
            id,
            object: 'checkout.session',
            mode: form.mode,
            customer: form.customer,
            url: `https://checkout.stripe.com/c/pay/${id}`,
          });
          return true;
        }
        if (req.path === '/v1/invoiceitems') {
          send(res, 200, {
            id: `ii_${randomBytes(8).toString('hex')}`,
            object: 'invoiceitem',
            customer: form.customer,
            amount: Number(form.amount),
            currency: form.currency,
          });
          return true;
        }
        if (req.path === '/v1/billing_portal/sessions') {
          const id = `bps_${randomBytes(8).toString('hex')}`;
          send(res, 200, {
            id,
            object: 'billing_portal.session',
            customer: form.customer,
            return_url: form.return_url,
            url: `https://billing.stripe.com/p/session/${id}`,
          });
          return true;
        }
        return false;
      },
    },
    'sk_test_double',
  );
  return {
    url: d.url,
    get requests() {
      return d.requests.map((r) => ({ ...r, form: formOf(r) }));
    },
    close: () => d.close(),
  };
}

function formOf(req: RecordedRequest): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(req.body.toString('utf8')));
}
