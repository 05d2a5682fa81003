-- Overage of an ended period on a tier with an overage rate: recorded at rollover (same transaction), then
-- reported to Stripe as an invoice item by the billing.report-overage job (idempotent on this row's id).
create table overage_charges (
  id text primary key,
  developer_id text not null references developers(id) on delete cascade,
  period_start timestamptz not null,
  period_end timestamptz not null,
  credits bigint not null,
  -- USD per 1,000 credits at the time of rollover.
  rate numeric not null,
  amount_cents bigint not null,
  created_at timestamptz not null default now(),
  reported_at timestamptz,
  stripe_invoice_item_id text,
  unique (developer_id, period_start)
);
create index overage_charges_unreported on overage_charges (created_at) where reported_at is null;
