import { useState } from 'preact/hooks';
import { END_REASON_WORDS, SESSION_END_REASONS } from '../../../shared/contracts/end-reasons.ts';
import { v1 } from '../api.ts';
import { callState, failureReason, KIND_WORDS } from '../call-words.ts';
import type { Agent, Page, SessionSummary } from '../types.ts';
import { ErrorBox, Field, fmtDate, Link, Loading, PageHeader, useAsync, THead } from '../ui.tsx';

export { failureReason } from '../call-words.ts';

const duration = (s: SessionSummary) =>
  s.startedAt && s.endedAt ? `${Math.round((Date.parse(s.endedAt) - Date.parse(s.startedAt)) / 1000)} s` : '—';

export function CallsPage() {
  const [agentId, setAgentId] = useState('');
  const [kind, setKind] = useState('');
  const [endReason, setEndReason] = useState('');
  const [more, setMore] = useState<SessionSummary[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const agents = useAsync(() => v1<Page<Agent>>('/agents', { query: { limit: 100 } }));
  // Every filter is the API's (agentId, kind, endReason), so "Load more" pages through the filtered list.
  const query = { agentId, kind, endReason, limit: 50 };
  const list = useAsync(async () => {
    const p = await v1<Page<SessionSummary>>('/observability/sessions', { query });
    setMore([]);
    setCursor(p.hasMore ? (p.nextCursor ?? null) : null);
    return p;
  }, [agentId, kind, endReason]);
  const filtered = Boolean(agentId || kind || endReason);
  const clear = () => (setAgentId(''), setKind(''), setEndReason(''));
  const names = new Map((agents.data?.data ?? []).map((a) => [a.id, a.name]));
  const rows = [...(list.data?.data ?? []), ...more];
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
        <Field label="Kind" name="kind" as="select" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
          <option value="">Any</option>
          {Object.entries(KIND_WORDS).map(([k, w]) => (
            <option key={k} value={k}>
              {w}
            </option>
          ))}
        </Field>
        <Field
          label="Ended"
          name="endReason"
          as="select"
          value={endReason}
          onChange={(e) => setEndReason(e.currentTarget.value)}
        >
          <option value="">Any way</option>
          {SESSION_END_REASONS.map((r) => (
            <option key={r} value={r}>
              {END_REASON_WORDS[r]}
            </option>
          ))}
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
        <table class="calls stack">
          <THead cols={['Started', 'Kind', 'Agent', 'Turns', 'Duration', 'Ended']} />
          <tbody>
            {rows.map((s) => {
              const state = callState(s);
              return (
                <tr key={s.id} data-session={s.id}>
                  <th scope="row">
                    <Link href={`/calls/${encodeURIComponent(s.id)}`}>{fmtDate(s.startedAt)}</Link>
                  </th>
                  <td data-label="Kind" data-testid="kind">
                    {KIND_WORDS[s.kind]}
                  </td>
                  <td data-label="Agent">{names.get(s.agentId) ?? s.agentId}</td>
                  <td data-label="Turns">{s.turns}</td>
                  <td data-label="Duration">{duration(s)}</td>
                  <td data-label="Ended">
                    <span class={`badge ${state.cls}`} data-testid="state">
                      {state.words}
                    </span>
                    {state.cls === 'failed' && (s.error || s.endReason) ? (
                      <div class="bad reason">{failureReason(s)}</div>
                    ) : s.endReason ? (
                      <div class="muted" data-testid="end-reason">
                        {END_REASON_WORDS[s.endReason]}
                      </div>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
      {cursor ? (
        <button
          type="button"
          onClick={() =>
            void v1<Page<SessionSummary>>('/observability/sessions', { query: { ...query, cursor } }).then((p) => {
              setMore((m) => [...m, ...p.data]);
              setCursor(p.hasMore ? (p.nextCursor ?? null) : null);
            })
          }
        >
          Load more
        </button>
      ) : null}
    </section>
  );
}
