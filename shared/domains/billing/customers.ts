import type { Queryable } from '../../kernel/db/pool.ts';

export interface BillingCustomerRow {
  developer_id: string;
  stripe_customer_id: string;
  stripe_subscription_id: string | null;
  subscription_status: string | null;
  tier_expires_at: Date | null;
  state_event_created: number;
}

const COLUMNS =
  'developer_id, stripe_customer_id, stripe_subscription_id, subscription_status, tier_expires_at, state_event_created';

export async function getBillingCustomer(db: Queryable, developerId: string): Promise<BillingCustomerRow | null> {
  const { rows } = await db.query<BillingCustomerRow>(
    `select ${COLUMNS} from billing_customers where developer_id = $1`,
    [developerId],
  );
  return rows[0] ?? null;
}

export async function findDeveloperByCustomer(db: Queryable, customerId: string): Promise<string | null> {
  const { rows } = await db.query<{ developer_id: string }>(
    'select developer_id from billing_customers where stripe_customer_id = $1',
    [customerId],
  );
  return rows[0]?.developer_id ?? null;
}

/** Records the developer's customer; the first writer wins and every caller gets the winner's row. */
export async function claimBillingCustomer(
  db: Queryable,
  developerId: string,
  customerId: string,
): Promise<BillingCustomerRow> {
  await db.query(
    `insert into billing_customers (developer_id, stripe_customer_id) values ($1, $2)
     on conflict (developer_id) do nothing`,
    [developerId, customerId],
  );
  return (await getBillingCustomer(db, developerId))!;
}

/** Locks the developer's billing row for a state change (webhooks), creating it from a customer id if needed. */
export async function lockBillingCustomer(
  db: Queryable,
  developerId: string,
  customerId: string,
): Promise<BillingCustomerRow> {
  await db.query(
    `insert into billing_customers (developer_id, stripe_customer_id) values ($1, $2)
     on conflict (developer_id) do nothing`,
    [developerId, customerId],
  );
  const { rows } = await db.query<BillingCustomerRow>(
    `select ${COLUMNS} from billing_customers where developer_id = $1 for update`,
    [developerId],
  );
  return rows[0]!;
}

export async function updateSubscriptionState(
  db: Queryable,
  developerId: string,
  s: { subscriptionId: string | null; status: string | null; tierExpiresAt: Date | null; eventCreated: number },
): Promise<void> {
  await db.query(
    `update billing_customers
        set stripe_subscription_id = $2, subscription_status = $3, tier_expires_at = $4, state_event_created = $5,
            updated_at = now()
      where developer_id = $1`,
    [developerId, s.subscriptionId, s.status, s.tierExpiresAt, s.eventCreated],
  );
}
