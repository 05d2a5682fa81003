import { useState } from 'preact/hooks';
import { v1 } from '../api.ts';
import type { Agent, Page, SessionSummary } from '../types.ts';
import { ErrorBox, Field, fmtDate, Link, Loading, PageHeader, useAsync, THead } from '../ui.tsx';

const duration = (s: SessionSummary) =>
  s.startedAt && s.endedAt ? `${Math.round((Date.parse(s.endedAt) - Date.parse(s.startedAt)) / 1000)} s` : '—';

export function CallsPage() {
  const [agentId, setAgentId] = useState('');
  const [channel, setChannel] = useState('');
  const [status, setStatus] = useState('');
  const [more, setMore] = useState<SessionSummary[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const agents = useAsync(() => v1<Page<Agent>>('/agents', { query: { limit: 100 } }));
  const list = useAsync(async () => {
    const p = await v1<Page<SessionSummary>>('/observability/sessions', { query: { agentId, limit: 50 } });
    setMore([]);
    setCursor(p.hasMore ? (p.nextCursor ?? null) : null);
    return p;
  }, [agentId]);
  const names = new Map((agents.data?.data ?? []).map((a) => [a.id, a.name]));
  // The API filters by agent; channel and status narrow the loaded pages here.
  const rows = [...(list.data?.data ?? []), ...more].filter(
    (s) => (!channel || s.channel === channel) && (!status || s.status === status),
  );
  return (
    <section>
      <PageHeader title="Calls" />
      <form class="filters" aria-label="Filter calls" onSubmit={(e) => e.preventDefault()}>
        <Field
          label="Agent"
          name="agent"
          as="select"
          value={agentId}
          onChange={(e) => setAgentId(e.currentTarget.value)}
        >
          <option value="">All agents</option>
          {(agents.data?.data ?? []).map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
            </option>
          ))}
        </Field>
        <Field
          label="Channel"
          name="channel"
          as="select"
          value={channel}
          onChange={(e) => setChannel(e.currentTarget.value)}
        >
          <option value="">Any</option>
          <option value="direct">Browser / direct</option>
          <option value="twilio">Phone (Twilio)</option>
        </Field>
        <Field
          label="Status"
          name="status"
          as="select"
          value={status}
          onChange={(e) => setStatus(e.currentTarget.value)}
        >
          <option value="">Any</option>
          <option value="active">Active</option>
          <option value="completed">Completed</option>
          <option value="failed">Failed</option>
        </Field>
      </form>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? <Loading what="calls" /> : null}
      {list.data && !rows.length ? <p class="muted">No calls match.</p> : null}
      {rows.length ? (
        <table class="calls">
          <THead cols={['Started', 'Agent', 'Channel', 'Turns', 'Duration', 'Status']} />
          <tbody>
            {rows.map((s) => (
              <tr key={s.id}>
                <th scope="row">
                  <Link href={`/calls/${encodeURIComponent(s.id)}`}>{fmtDate(s.startedAt)}</Link>
                </th>
                <td>{names.get(s.agentId) ?? s.agentId}</td>
                <td>{s.channel}</td>
                <td>{s.turns}</td>
                <td>{duration(s)}</td>
                <td>
                  <span class={`badge ${s.status}`}>{s.status}</span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {cursor ? (
        <button
          type="button"
          onClick={() =>
            void v1<Page<SessionSummary>>('/observability/sessions', { query: { agentId, limit: 50, cursor } }).then(
              (p) => {
                setMore((m) => [...m, ...p.data]);
                setCursor(p.hasMore ? (p.nextCursor ?? null) : null);
              },
            )
          }
        >
          Load more
        </button>
      ) : null}
    </section>
  );
}
