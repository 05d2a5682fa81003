import type { Infra } from '../../platform/infra.ts';
import { stripeBilling, stripeFailure } from './stripe-client.ts';

interface OverageRow {
  id: string;
  developer_id: string;
  period_start: Date;
  period_end: Date;
  credits: number;
  rate: number;
  amount_cents: number;
  stripe_customer_id: string | null;
}

const BATCH = 100;

/**
 * Reports recorded overage (see ensureAccount's rollover) to Stripe as invoice items on the developer's customer,
 * so it is billed with the next subscription invoice. Idempotent: the Stripe idempotency key is the row id and a
 * row is marked only after Stripe accepted it. Rows of developers without a Stripe customer, and every row while
 * Stripe is not configured, wait (the operator sees them in overage_charges).
 */
export async function reportOverage(
  infra: Infra,
  signal?: AbortSignal,
): Promise<{ reported: number; waiting: number }> {
  const billing = stripeBilling(infra.config);
  if (!billing) return { reported: 0, waiting: 0 };
  const { rows } = await infra.db.query<OverageRow>(
    `select o.id, o.developer_id, o.period_start, o.period_end, o.credits, o.rate, o.amount_cents,
            c.stripe_customer_id
       from overage_charges o left join billing_customers c on c.developer_id = o.developer_id
      where o.reported_at is null
      order by o.created_at limit $1`,
    [BATCH],
  );
  let reported = 0;
  let waiting = 0;
  for (const row of rows) {
    if (signal?.aborted) break;
    if (!row.stripe_customer_id) {
      waiting++;
      continue;
    }
    let itemId: string | null = null;
    if (row.amount_cents > 0) {
      const item = await billing.stripe.invoiceItems
        .create(
          {
            customer: row.stripe_customer_id,
            currency: 'usd',
            amount: row.amount_cents,
            description: `Overage: ${row.credits} credits at $${row.rate} per 1,000 (${row.period_start
              .toISOString()
              .slice(0, 10)} – ${row.period_end.toISOString().slice(0, 10)})`,
            metadata: { developerId: row.developer_id, overageId: row.id },
          },
          { idempotencyKey: `vap-overage-${row.id}` },
        )
        .catch((e: unknown) => {
          throw stripeFailure(e);
        });
      itemId = item.id;
    }
    await infra.db.query('update overage_charges set reported_at = now(), stripe_invoice_item_id = $2 where id = $1', [
      row.id,
      itemId,
    ]);
    reported++;
  }
  if (reported || waiting) infra.log.info({ reported, waiting }, 'overage reported to stripe');
  return { reported, waiting };
}
