import { useState } from 'preact/hooks';
import { v1 } from '../api.ts';
import { navigate } from '../router.ts';
import type { Agent, Page } from '../types.ts';
import { ErrorBox, fmtDate, Link, Loading, PageHeader, useAsync, THead } from '../ui.tsx';
import { AgentForm } from './agent-form.tsx';

export function AgentsPage() {
  const list = useAsync(() => v1<Page<Agent>>('/agents', { query: { limit: 100 } }));
  const [creating, setCreating] = useState(false);
  return (
    <section>
      <PageHeader title="Agents">
        {!creating ? (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New agent
          </button>
        ) : null}
      </PageHeader>
      {creating ? (
        <div class="card">
          <h2>New agent</h2>
          <AgentForm
            submitLabel="Create agent"
            onCancel={() => setCreating(false)}
            onSave={async (body) => {
              const a = await v1<Agent>('/agents', { json: body });
              navigate(`/agents/${encodeURIComponent(a.id)}`);
            }}
          />
        </div>
      ) : null}
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? <Loading what="agents" /> : null}
      {list.data?.data.length === 0 && !creating ? <p class="muted">No agents yet. Create one to start.</p> : null}
      {list.data?.data.length ? (
        <table>
          <THead cols={['Name', 'LLM', 'Voice', 'Collection', 'Updated']} />
          <tbody>
            {list.data.data.map((a) => (
              <tr key={a.id}>
                <th scope="row">
                  <Link href={`/agents/${encodeURIComponent(a.id)}`}>{a.name}</Link>
                </th>
                <td>
                  {a.llmProvider} {a.llmModel}
                </td>
                <td>
                  {a.ttsProvider} / {a.voiceId}
                </td>
                <td>{a.collectionId ?? '—'}</td>
                <td>{fmtDate(a.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
