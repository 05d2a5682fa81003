import { useState } from 'preact/hooks';
import { KEYED_VENDORS } from '../../../shared/contracts/providers.ts';
import { v1 } from '../api.ts';
import type { Page, ProviderKey } from '../types.ts';
import {
  ConfirmButton,
  ErrorBox,
  Field,
  fieldError,
  fmtDate,
  formValues,
  Loading,
  PageHeader,
  useAsync,
  THead,
  useAction,
} from '../ui.tsx';

interface Verify {
  provider: string;
  valid: boolean;
  detail: string;
}

export function ProviderKeysPage() {
  const list = useAsync(() => v1<Page<ProviderKey>>('/provider-keys'));
  const [verified, setVerified] = useState<Record<string, Verify>>({});
  const { error, busy, act } = useAction(list.reload);

  return (
    <section>
      <PageHeader title="Provider keys" />
      <p>
        Your own vendor keys, stored encrypted and used instead of platform credits. A stored key is never shown back;
        only its last four characters.
      </p>
      <form
        class="inline-form"
        aria-labelledby="store-h"
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const f = formValues(form);
          void act(async () => {
            await v1('/provider-keys', { json: { provider: f.provider, apiKey: f.apiKey } });
            form.reset();
          });
        }}
      >
        <h2 id="store-h">Store a key</h2>
        <Field label="Provider" name="provider" as="select" error={fieldError(error, 'provider')}>
          {KEYED_VENDORS.map((v) => (
            <option key={v} value={v}>
              {v}
            </option>
          ))}
        </Field>
        <Field
          label="API key"
          name="apiKey"
          type="password"
          autoComplete="off"
          required
          error={fieldError(error, 'apiKey')}
        />
        <button type="submit" class="primary" disabled={busy}>
          Store key
        </button>
      </form>
      {error && !fieldError(error, 'provider') && !fieldError(error, 'apiKey') ? <ErrorBox error={error} /> : null}
      <h2>Stored keys</h2>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? <Loading what="provider keys" /> : null}
      {list.data?.data.length === 0 ? <p class="muted">No provider keys stored.</p> : null}
      {list.data?.data.length ? (
        <table>
          <THead cols={['Provider', 'Key', 'Stored', 'Verified', '']} />
          <tbody>
            {list.data.data.map((k) => {
              const v = verified[k.provider];
              return (
                <tr key={k.provider}>
                  <th scope="row">{k.provider}</th>
                  <td>
                    <code>••••{k.lastFour}</code>
                  </td>
                  <td>{fmtDate(k.createdAt)}</td>
                  <td>
                    {v ? (
                      <span class={v.valid ? 'ok' : 'bad'} role="status">
                        {v.valid ? 'Valid' : 'Rejected'}: {v.detail}
                      </span>
                    ) : (
                      fmtDate(k.verifiedAt)
                    )}
                  </td>
                  <td class="actions">
                    <button
                      type="button"
                      disabled={busy}
                      onClick={() =>
                        void act(async () => {
                          const r = await v1<Verify>(`/provider-keys/${k.provider}/verify`, { method: 'POST' });
                          setVerified((s) => ({ ...s, [k.provider]: r }));
                        })
                      }
                    >
                      Verify
                    </button>
                    <ConfirmButton
                      label="Delete"
                      confirmLabel={`Delete ${k.provider} key`}
                      onConfirm={() => void act(() => v1(`/provider-keys/${k.provider}`, { method: 'DELETE' }))}
                    />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
