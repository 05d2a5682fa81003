import { v1 } from '../api.ts';
import type { Page } from '../types.ts';
import { ErrorBox, fmtDate, Link, Loading, PageHeader, THead, useAsync } from '../ui.tsx';

/** The fields of GET /v1/campaigns(/:id) this page shows (shared/kernel/contracts/campaigns.ts has the full shape). */
interface Campaign {
  id: string;
  name: string | null;
  agentId: string;
  status: string;
  maxConcurrency: number;
  callingHours: { start: string; end: string };
  timeZone: string;
  counts: { total: number; pending: number; calling: number; done: number; outcomes: Record<string, number> };
  createdAt: string;
}
interface Recipient {
  id: string;
  phone: string;
  state: string;
  outcome: string | null;
  outcomeReason: string | null;
  answeredBy: string | null;
  nextAttemptAt: string | null;
  attempts: Array<{ id: string; sessionId: string | null; outcome: string | null }>;
}

const OUTCOME: Record<string, string> = {
  answered: 'Answered',
  voicemail_left: 'Voicemail left',
  voicemail: 'Voicemail',
  no_answer: 'No answer',
  busy: 'Busy',
  failed: 'Failed',
  transferred: 'Transferred',
  canceled: 'Canceled',
};

const progress = (c: Campaign) => `${c.counts.done} of ${c.counts.total} done, ${c.counts.calling} calling`;

export function CampaignsPage() {
  const list = useAsync(() => v1<Page<Campaign>>('/campaigns', { query: { limit: 100 } }));
  const rows = list.data?.data ?? [];
  return (
    <section>
      <PageHeader title="Campaigns" />
      <p class="muted">Outbound calling campaigns, started with POST /v1/campaigns.</p>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? <Loading what="campaigns" /> : null}
      {list.data && !rows.length ? <p class="muted">No campaigns yet.</p> : null}
      {rows.length ? (
        <table>
          <THead cols={['Campaign', 'Created', 'Progress', 'Status']} />
          <tbody>
            {rows.map((c) => (
              <tr key={c.id}>
                <th scope="row">
                  <Link href={`/campaigns/${encodeURIComponent(c.id)}`}>{c.name ?? c.id}</Link>
                </th>
                <td>{fmtDate(c.createdAt)}</td>
                <td>{progress(c)}</td>
                <td>
                  <span class={`badge ${c.status}`}>{c.status}</span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

export function CampaignDetailPage(props: { id: string }) {
  const d = useAsync(() => v1<Campaign & { recipients: Recipient[] }>(`/campaigns/${encodeURIComponent(props.id)}`));
  const c = d.data;
  return (
    <section>
      <PageHeader title={c?.name ?? 'Campaign'} />
      <ErrorBox error={d.error} />
      {d.loading && !c ? <Loading what="the campaign" /> : null}
      {c ? (
        <>
          <p>
            <span class={`badge ${c.status}`}>{c.status}</span> {progress(c)}; up to {c.maxConcurrency} at once, calling
            hours {c.callingHours.start}–{c.callingHours.end} ({c.timeZone}).
          </p>
          <table>
            <THead cols={['Phone', 'Outcome', 'Answered by', 'Attempts', 'Next attempt']} />
            <tbody>
              {c.recipients.map((r) => {
                const last = r.attempts.at(-1);
                return (
                  <tr key={r.id}>
                    <th scope="row">{r.phone}</th>
                    <td>
                      {r.outcome ? (OUTCOME[r.outcome] ?? r.outcome) : r.state}
                      {r.outcomeReason ? <span class="muted"> ({r.outcomeReason})</span> : null}
                    </td>
                    <td>{r.answeredBy ?? '—'}</td>
                    <td>
                      {last?.sessionId ? (
                        <Link href={`/calls/${encodeURIComponent(last.sessionId)}`}>{r.attempts.length}</Link>
                      ) : (
                        r.attempts.length
                      )}
                    </td>
                    <td>{fmtDate(r.nextAttemptAt)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      ) : null}
    </section>
  );
}
