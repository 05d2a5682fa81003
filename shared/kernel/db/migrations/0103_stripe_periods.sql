-- The newest Stripe subscription period applied to the account (null: the developer never had a subscription
-- and the credit period runs monthly from first use). Webhooks arrive replayed and out of order; a period is
-- applied only when it starts after this one, so the same period never grants credits twice.
alter table credit_accounts
  add column stripe_period_start timestamptz,
  add column stripe_period_end timestamptz;
