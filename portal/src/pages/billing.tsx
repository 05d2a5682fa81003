import { useState } from 'preact/hooks';
import { ApiError, request, v1 } from '../api.ts';
import type { BillingSetup, DailyUsage, Subscription } from '../types.ts';
import { ErrorBox, fmtDate, fmtNum, Loading, PageHeader, useAsync } from '../ui.tsx';

const TIERS = ['starter', 'pro', 'scale'] as const;

/** 503 billing_not_configured: the operator has not set Stripe up; say so plainly instead of a raw error. */
function BillingError(props: { error: unknown }) {
  const e = props.error;
  if (e instanceof ApiError && (e.status === 503 || e.code === 'billing_not_configured'))
    return (
      <p class="notice" role="alert">
        Payments are not set up on this platform (Stripe is not configured), so plans cannot be changed here. Ask the
        operator to set the Stripe keys.
      </p>
    );
  return <ErrorBox error={e} />;
}

export function BillingPage() {
  const sub = useAsync(() => v1<Subscription & { subscriptionStatus?: string | null }>('/billing/subscription'));
  const period = useAsync(() => request<DailyUsage>('/usage/daily'));
  const setup = useAsync(() => request<BillingSetup>('/billing/setup'));
  // Known before any click: without Stripe the buttons are disabled and say why (aria-describedby).
  const noStripe = setup.data?.stripeConfigured === false;
  const why = noStripe ? 'billing-why' : undefined;
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const back = `${location.origin}/portal/billing`;
  const status = new URLSearchParams(location.search).get('checkout');

  async function go(fn: () => Promise<{ url: string }>) {
    setBusy(true);
    setError(null);
    try {
      const { url } = await fn();
      location.assign(url);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  }

  const s = sub.data;
  return (
    <section>
      <PageHeader title="Billing" />
      {status === 'success' ? (
        <p class="notice" role="status">
          Thank you: your plan changes as soon as Stripe confirms the payment.
        </p>
      ) : null}
      <ErrorBox error={sub.error} />
      {sub.loading && !s ? <Loading what="subscription" /> : null}
      {s ? (
        <dl class="stats">
          <div>
            <dt>Plan</dt>
            <dd>{s.tierDisplay}</dd>
          </div>
          <div>
            <dt>Period</dt>
            <dd>
              {period.data ? `${period.data.period.start.slice(0, 10)} – ${period.data.period.end.slice(0, 10)}` : '—'}
            </dd>
          </div>
          <div>
            <dt>Credits used</dt>
            <dd>
              {fmtNum(Math.round(s.credits.used))} / {fmtNum(s.credits.limit)}
            </dd>
          </div>
          <div>
            <dt>Monthly credits</dt>
            <dd>{fmtNum(s.plan.monthlyCredits)}</dd>
          </div>
          <div>
            <dt>Overage rate</dt>
            <dd>{s.plan.overageRate}</dd>
          </div>
          <div>
            <dt>Renews / expires</dt>
            <dd>{fmtDate(s.tierExpiresAt)}</dd>
          </div>
        </dl>
      ) : null}
      <h2>Change plan</h2>
      {noStripe ? (
        <p class="notice" id="billing-why">
          Payments are not set up on this platform (Stripe is not configured), so plans cannot be changed and there is
          no customer portal here. The operator sets STRIPE_SECRET_KEY and its price ids to turn them on.
        </p>
      ) : null}
      <div class="row">
        {TIERS.filter((t) => t !== s?.tier).map((t) => (
          <button
            key={t}
            type="button"
            class="primary"
            disabled={busy || noStripe}
            aria-describedby={why}
            onClick={() =>
              void go(() =>
                v1('/billing/checkout', {
                  json: { tier: t, successUrl: `${back}?checkout=success`, cancelUrl: `${back}?checkout=cancelled` },
                }),
              )
            }
          >
            Switch to {t} (Stripe Checkout)
          </button>
        ))}
      </div>
      <h2>Invoices and payment methods</h2>
      <button
        type="button"
        disabled={busy || noStripe}
        aria-describedby={why}
        onClick={() => void go(() => v1('/billing/portal', { json: { returnUrl: back } }))}
      >
        Open the Stripe customer portal
      </button>
      <BillingError error={error} />
    </section>
  );
}
