import { useState } from 'preact/hooks';
import { END_REASON_WORDS } from '../../../shared/kernel/contracts/end-reasons.ts';
import { v1 } from '../api.ts';
import type { Agent, Page, SessionSummary } from '../types.ts';
import { ErrorBox, Field, fmtDate, Link, Loading, PageHeader, useAsync, THead } from '../ui.tsx';

const duration = (s: SessionSummary) =>
  s.startedAt && s.endedAt ? `${Math.round((Date.parse(s.endedAt) - Date.parse(s.startedAt)) / 1000)} s` : '—';

/** How a call ended, in words (the typed end reason), after which a failed call's stored error says more. */
export function failureReason(s: SessionSummary): string {
  const how = s.endReason ? END_REASON_WORDS[s.endReason] : 'Failed';
  return s.error && s.status === 'failed' ? `${how}: ${s.error}` : how;
}

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
  const filtered = Boolean(agentId || channel || status);
  const clear = () => (setAgentId(''), setChannel(''), setStatus(''));
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
      {list.data && !rows.length ? (
        filtered ? (
          <p class="muted">
            No calls match these filters.{' '}
            <button type="button" class="link-button" onClick={clear}>
              Clear the filters
            </button>
          </p>
        ) : (
          <div class="card empty">
            <p>
              <strong>No calls yet.</strong> A call appears here as soon as it starts, with its transcript, timings and
              recording. Open an agent under <Link href="/agents">Agents</Link> and press <em>Start talking</em>, or
              call its phone number.
            </p>
          </div>
        )
      ) : null}
      {rows.length ? (
        <div class="table-wrap">
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
                    {s.status === 'failed' && (s.error || s.endReason) ? (
                      <div class="bad reason">{failureReason(s)}</div>
                    ) : s.endReason ? (
                      <div class="muted" data-testid="end-reason">
                        {END_REASON_WORDS[s.endReason]}
                      </div>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
