import { useState } from 'preact/hooks';
import { v1 } from '../api.ts';
import type { ApiKey, CreatedKey, Page } from '../types.ts';
import {
  ConfirmButton,
  CopyButton,
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

/** The raw key, shown once: after create or rotate, never again. */
function RevealedKey(props: { created: CreatedKey; onDismiss: () => void }) {
  return (
    <div class="callout" role="status" aria-live="polite">
      <h2>Copy your new key now</h2>
      <p>
        This is the only time <strong>{props.created.name}</strong> is shown in full. Store it in your server's secret
        manager.
      </p>
      <div class="row">
        <code class="secret" data-testid="raw-key">
          {props.created.key}
        </code>
        <CopyButton text={props.created.key} />
        <button type="button" onClick={props.onDismiss}>
          I have stored it
        </button>
      </div>
    </div>
  );
}

export function KeysPage() {
  const list = useAsync(() => v1<Page<ApiKey>>('/keys', { query: { limit: 100 } }));
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const { error, busy, act } = useAction(list.reload);

  return (
    <section>
      <PageHeader title="API keys" />
      <p>Server-side keys for the /v1 API. A key is shown once, when it is created or rotated.</p>
      {created ? <RevealedKey created={created} onDismiss={() => setCreated(null)} /> : null}
      <form
        class="inline-form"
        aria-labelledby="new-key-h"
        onSubmit={(e) => {
          e.preventDefault();
          const f = formValues(e.currentTarget);
          const form = e.currentTarget;
          void act(async () => {
            const days = Number(f.expiresInDays);
            setCreated(
              await v1<CreatedKey>('/keys', {
                json: { name: f.name || 'Default', ...(days ? { expiresInDays: days } : {}) },
              }),
            );
            form.reset();
          });
        }}
      >
        <h2 id="new-key-h">Create a key</h2>
        <Field
          label="Name"
          name="name"
          placeholder="Production server"
          maxLength={100}
          error={fieldError(error, 'name')}
        />
        <Field label="Expires" name="expiresInDays" as="select" error={fieldError(error, 'expiresInDays')}>
          <option value="">Never</option>
          <option value="30">In 30 days</option>
          <option value="90">In 90 days</option>
          <option value="365">In 365 days</option>
        </Field>
        <button type="submit" class="primary" disabled={busy}>
          Create key
        </button>
      </form>
      {error && !fieldError(error, 'name') && !fieldError(error, 'expiresInDays') ? <ErrorBox error={error} /> : null}
      <h2>Your keys</h2>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? <Loading what="keys" /> : null}
      {list.data ? (
        list.data.data.length ? (
          <table>
            <THead cols={['Name', 'Key', 'Created', 'Expires', 'Last used', '']} />
            <tbody>
              {list.data.data.map((k) => (
                <tr key={k.id}>
                  <th scope="row">{k.name}</th>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{fmtDate(k.createdAt)}</td>
                  <td>{k.expiresAt ? fmtDate(k.expiresAt) : 'Never'}</td>
                  <td>{fmtDate(k.lastUsedAt)}</td>
                  <td class="actions">
                    <ConfirmButton
                      label="Rotate"
                      confirmLabel={`Rotate ${k.name}`}
                      disabled={busy}
                      onConfirm={() =>
                        void act(async () =>
                          setCreated(await v1<CreatedKey>(`/keys/${k.id}/rotate`, { method: 'POST' })),
                        )
                      }
                    />
                    <ConfirmButton
                      label="Revoke"
                      confirmLabel={`Revoke ${k.name}`}
                      disabled={busy}
                      onConfirm={() => void act(() => v1(`/keys/${k.id}`, { method: 'DELETE' }))}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p class="muted">No keys yet.</p>
        )
      ) : null}
    </section>
  );
}
