import { useState } from 'preact/hooks';
import { ApiError, errorMessage, request, setCsrfToken } from '../api.ts';
import { navigate } from '../router.ts';
import { pendingPhone, refreshSession } from '../session.ts';
import { Field, fieldError } from '../ui.tsx';

type Step = 'phone' | 'code' | 'name';

interface VerifyResult {
  status: 'signed_in' | 'needs_name';
  csrfToken?: string;
}

/** Phone → one-time code → (new accounts) a name. Errors stay inline beside the field they are about. */
export function LoginPage() {
  const [step, setStep] = useState<Step>(pendingPhone ? 'name' : 'phone');
  const [phone, setPhone] = useState(pendingPhone ?? '');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [resendAfter, setResendAfter] = useState(0);

  async function run(fn: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  const sendCode = () =>
    run(async () => {
      const r = await request<{ sent: boolean; resendAfterSeconds?: number }>('/auth/otp', {
        json: { phone },
        quiet401: true,
      });
      setResendAfter(r.resendAfterSeconds ?? 0);
      setStep('code');
    });

  const finish = async () => {
    const dev = await refreshSession();
    if (dev) navigate('/', true);
  };

  const fieldFor = (param: string) =>
    fieldError(error, param) ??
    // An error without a param on this step belongs to the field in front of the user.
    (error instanceof ApiError && !error.param && param === step ? error.message : undefined);

  return (
    <section class="login">
      <h1 tabIndex={-1}>Sign in to the developer portal</h1>
      {step === 'phone' ? (
        <form
          key="phone"
          onSubmit={(e) => {
            e.preventDefault();
            void sendCode();
          }}
        >
          <p>We text a 6-digit code to your phone. New numbers get a new account.</p>
          <Field
            label="Phone number"
            name="phone"
            type="tel"
            autoComplete="tel"
            inputMode="tel"
            placeholder="+1 415 555 0100"
            required
            value={phone}
            error={fieldFor('phone')}
            hint="International format, with the country code."
            onInput={(e) => setPhone(e.currentTarget.value)}
          />
          <button type="submit" class="primary" disabled={busy}>
            Send code
          </button>
        </form>
      ) : step === 'code' ? (
        <form
          key="code"
          onSubmit={(e) => {
            e.preventDefault();
            const code = String(new FormData(e.currentTarget).get('code') ?? '').trim();
            void run(async () => {
              const r = await request<VerifyResult>('/auth/verify', { json: { phone, code }, quiet401: true });
              if (r.csrfToken) setCsrfToken(r.csrfToken);
              if (r.status === 'needs_name') setStep('name');
              else await finish();
            });
          }}
        >
          <p>
            Enter the code sent to <strong>{phone}</strong>.
            {resendAfter ? <span class="muted"> You can ask for a new one in {resendAfter} s.</span> : null}
          </p>
          <Field
            label="Code"
            name="code"
            autoComplete="one-time-code"
            inputMode="numeric"
            pattern="[0-9]{6}"
            maxLength={6}
            required
            error={fieldFor('code')}
          />
          <div class="row">
            <button type="submit" class="primary" disabled={busy}>
              Verify
            </button>
            <button type="button" disabled={busy} onClick={() => void sendCode()}>
              Send a new code
            </button>
            <button type="button" class="link-button" onClick={() => (setStep('phone'), setError(null))}>
              Use another number
            </button>
          </div>
        </form>
      ) : (
        <form
          key="name"
          onSubmit={(e) => {
            e.preventDefault();
            const name = String(new FormData(e.currentTarget).get('name') ?? '').trim();
            void run(async () => {
              const r = await request<{ csrfToken?: string }>('/auth/signup', { json: { name }, quiet401: true });
              if (r?.csrfToken) setCsrfToken(r.csrfToken);
              await finish();
            });
          }}
        >
          <p>Welcome. What should we call your account?</p>
          <Field
            label="Account name"
            name="name"
            autoComplete="organization"
            required
            maxLength={100}
            error={fieldFor('name')}
          />
          <button type="submit" class="primary" disabled={busy}>
            Create account
          </button>
        </form>
      )}
      {error && !fieldFor(step) ? (
        <p class="error" role="alert">
          {errorMessage(error)}
        </p>
      ) : null}
    </section>
  );
}
