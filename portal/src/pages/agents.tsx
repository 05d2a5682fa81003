import { useState } from 'preact/hooks';
import { v1 } from '../api.ts';
import { LLM_PROVIDER_LABELS, type LlmProvider } from '../../../shared/contracts/providers.ts';
import { navigate } from '../router.ts';
import type { Agent, Collection, Page } from '../types.ts';
import { ErrorBox, fmtDate, Link, Loading, PageHeader, useAsync, THead } from '../ui.tsx';
import { AgentForm } from './agent-form.tsx';

export function AgentsPage() {
  const list = useAsync(() => v1<Page<Agent>>('/agents', { query: { limit: 100 } }));
  const cols = useAsync(() => v1<Page<Collection>>('/collections', { query: { limit: 100 } }));
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
            collections={cols.data?.data ?? []}
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
      {list.data?.data.length === 0 && !creating ? <FirstAgent /> : null}
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
                  {a.llmProvider === 'local'
                    ? LLM_PROVIDER_LABELS.local
                    : `${LLM_PROVIDER_LABELS[a.llmProvider as LlmProvider] ?? a.llmProvider} · ${a.llmModel}`}
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

/** The README's front-desk agent, provisioned with its collection in one click: a first agent that answers. */
const FRONT_DESK = {
  name: 'Front desk',
  systemPrompt: 'You answer questions about our opening hours.',
  firstMessage: 'Hello, how can I help?',
  collection: { name: 'hours' },
  initialContent: [{ content: 'We are open 9am to 5pm, Monday to Friday.', contentType: 'text' }],
};

function FirstAgent() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return (
    <div class="card">
      <h2>No agents yet</h2>
      <p>
        Create one with <strong>New agent</strong>, or start from the example: a front desk that answers questions about
        opening hours from a small knowledge collection. With no LLM key it replies through the local reply engine (a
        knowledge lookup, not a language model).
      </p>
      <button
        type="button"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          setError(null);
          v1<{ agent: Agent }>('/agents/provision', { json: FRONT_DESK }).then(
            (r) => navigate(`/agents/${encodeURIComponent(r.agent.id)}`),
            (e: unknown) => (setBusy(false), setError(e)),
          );
        }}
      >
        Create the front-desk example
      </button>
      <ErrorBox error={error} />
    </div>
  );
}
