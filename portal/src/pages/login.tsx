import { useEffect, useState } from 'preact/hooks';
import { ApiError, errorMessage, request, setCsrfToken } from '../api.ts';
import { navigate } from '../router.ts';
import { pendingPhone, refreshSession, signedOut } from '../session.ts';
import type { LoginOptions } from '../types.ts';
import { Field, fieldError, useAsync } from '../ui.tsx';

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
  const options = useAsync(() => request<LoginOptions>('/auth/options', { quiet401: true }));
  // A reload during sign-up: the page renders before the session check answers; once it says the phone is
  // verified but the account has no name yet, go back to the name step instead of asking for the phone again.
  useEffect(() => {
    if (pendingPhone && step === 'phone') {
      setPhone(pendingPhone);
      setStep('name');
    }
  }, [pendingPhone]);

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
      {options.data?.codeDelivery === 'development_sink' && step !== 'name' ? <DevSinkNotice phone={phone} /> : null}
      {options.data?.codeDelivery === 'not_configured' ? (
        <p class="notice" role="status">
          Sign-in is not set up on this server: the operator has not chosen how codes are sent (PORTAL_OTP_SENDER).
        </p>
      ) : null}
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
          <p>
            Welcome. <strong>{phone}</strong> is verified: what should we call your account?
          </p>
          <Field
            label="Account name"
            name="name"
            autoComplete="organization"
            required
            maxLength={100}
            error={fieldFor('name')}
          />
          <div class="row">
            <button type="submit" class="primary" disabled={busy}>
              Create account
            </button>
            <button
              type="button"
              class="link-button"
              onClick={() =>
                void request('/auth/logout', { method: 'POST', quiet401: true })
                  .catch(() => {})
                  .then(() => (signedOut(), setError(null), setPhone(''), setStep('phone')))
              }
            >
              Use another number
            </button>
          </div>
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

/** Development sink: no SMS leaves the machine, so say where the code is instead of leaving people waiting. */
function DevSinkNotice(props: { phone: string }) {
  return (
    <div class="notice" role="note" data-testid="dev-sink">
      <p>
        <strong>Development mode: no SMS is sent.</strong> The code is written to the API's log (the line{' '}
        <q>portal sign-in code (development sink)</q>) and can be read with:
      </p>
      <pre>
        <code>npm run cli -- portal code --phone {props.phone.replace(/[^\d+]/g, '') || '+14155550100'}</code>
      </pre>
    </div>
  );
}
