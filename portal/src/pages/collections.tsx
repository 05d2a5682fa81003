import { useState } from 'preact/hooks';
import { v1 } from '../api.ts';
import { navigate } from '../router.ts';
import type { Collection, Page } from '../types.ts';
import {
  ErrorBox,
  Field,
  fieldError,
  fmtDate,
  formValues,
  Link,
  Loading,
  PageHeader,
  useAsync,
  THead,
} from '../ui.tsx';

export function CollectionsPage() {
  const list = useAsync(() => v1<Page<Collection>>('/collections', { query: { limit: 100 } }));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <section>
      <PageHeader title="Collections" />
      <p>Knowledge an agent can search while it talks. Attach a collection on the agent's page.</p>
      <form
        class="inline-form"
        aria-labelledby="new-col-h"
        onSubmit={(e) => {
          e.preventDefault();
          const f = formValues(e.currentTarget);
          setBusy(true);
          setError(null);
          v1<Collection>('/collections', {
            json: { name: f.name, ...(f.description ? { description: f.description } : {}) },
          }).then(
            (c) => navigate(`/collections/${encodeURIComponent(c.id)}`),
            (e2: unknown) => (setError(e2), setBusy(false)),
          );
        }}
      >
        <h2 id="new-col-h">New collection</h2>
        <Field label="Name" name="name" required maxLength={100} error={fieldError(error, 'name')} />
        <Field label="Description" name="description" maxLength={500} error={fieldError(error, 'description')} />
        <button type="submit" class="primary" disabled={busy}>
          Create collection
        </button>
      </form>
      {error && !fieldError(error, 'name') && !fieldError(error, 'description') ? <ErrorBox error={error} /> : null}
      <h2>Your collections</h2>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? <Loading what="collections" /> : null}
      {list.data?.data.length === 0 ? <p class="muted">No collections yet.</p> : null}
      {list.data?.data.length ? (
        <table>
          <THead cols={['Name', 'Description', 'Created']} />
          <tbody>
            {list.data.data.map((c) => (
              <tr key={c.id}>
                <th scope="row">
                  <Link href={`/collections/${encodeURIComponent(c.id)}`}>{c.name}</Link>
                </th>
                <td>{c.description || '—'}</td>
                <td>{fmtDate(c.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
