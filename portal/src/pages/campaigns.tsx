import { useState } from 'preact/hooks';
import { END_REASON_WORDS } from '../../../shared/contracts/end-reasons.ts';
import { v1 } from '../api.ts';
import type { Agent, Campaign, CampaignRecipient, Page } from '../types.ts';
import {
  ConfirmButton,
  ErrorBox,
  fmtDate,
  Link,
  Loading,
  PageHeader,
  THead,
  useAction,
  useAsync,
  usePoll,
} from '../ui.tsx';
import { NewCampaign } from './campaign-new.tsx';

/** Each outcome in words (shared/contracts/campaigns.ts, CallOutcome). */
export const OUTCOME_WORDS: Record<string, string> = {
  answered: 'Answered',
  voicemail_left: 'Voicemail: message left',
  voicemail: 'Voicemail: no message',
  no_answer: 'No answer',
  busy: 'Busy',
  failed: 'Failed',
  transferred: 'Transferred to a person',
  canceled: 'Canceled',
};

const WAITING: Record<string, string> = {
  daily_cap: 'waiting: the daily spending cap has no room for the next call',
  balance: 'waiting: the balance cannot fund the next call',
};

const progress = (c: Campaign) =>
  `${c.counts.done} of ${c.counts.total} done, ${c.counts.calling} calling, ${c.counts.pending} waiting`;

export function CampaignsPage() {
  const list = useAsync(() => v1<Page<Campaign>>('/campaigns', { query: { limit: 100 } }));
  const [creating, setCreating] = useState(false);
  const rows = list.data?.data ?? [];
  usePoll(
    rows.some((c) => c.status === 'active'),
    list.reload,
    5000,
  );
  return (
    <section>
      <PageHeader title="Campaigns">
        {!creating ? (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New campaign
          </button>
        ) : null}
      </PageHeader>
      <p class="muted">Outbound calling campaigns: one agent calls a list of recipients from a CSV file.</p>
      {creating ? <NewCampaign /> : null}
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? <Loading what="campaigns" /> : null}
      {list.data && !rows.length ? <p class="muted">No campaigns yet.</p> : null}
      {rows.length ? (
        <table class="stack">
          <THead cols={['Campaign', 'Created', 'Progress', 'Status']} />
          <tbody>
            {rows.map((c) => (
              <tr key={c.id}>
                <th scope="row">
                  <Link href={`/campaigns/${encodeURIComponent(c.id)}`}>{c.name ?? c.id}</Link>
                </th>
                <td data-label="Created">{fmtDate(c.createdAt)}</td>
                <td data-label="Progress">{progress(c)}</td>
                <td data-label="Status">
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

/** A recipient's result in words: the outcome, then how the last call ended (the session's end reason). */
function RecipientOutcome(props: { r: CampaignRecipient }) {
  const { r } = props;
  const last = r.attempts.at(-1);
  const outcome = r.outcome ? (OUTCOME_WORDS[r.outcome] ?? r.outcome) : stateWords(r);
  // How the last call ended, unless the outcome already says it in the same words.
  const ended =
    last?.endReason && END_REASON_WORDS[last.endReason] !== outcome ? END_REASON_WORDS[last.endReason] : null;
  return (
    <>
      <span data-testid="outcome">{outcome}</span>
      {ended ? (
        <div class="muted" data-testid="end-reason">
          {ended}
        </div>
      ) : null}
      {r.outcomeReason ? <div class="muted">{r.outcomeReason}</div> : null}
    </>
  );
}

const stateWords = (r: CampaignRecipient) =>
  r.state === 'calling' ? 'Calling now' : r.waiting ? WAITING[r.waiting] : 'Waiting to be called';

export function CampaignDetailPage(props: { id: string }) {
  const enc = encodeURIComponent(props.id);
  const d = useAsync(() => v1<Campaign & { recipients: CampaignRecipient[] }>(`/campaigns/${enc}`));
  const agent = useAsync(
    () => (d.data ? v1<Agent>(`/agents/${encodeURIComponent(d.data.agentId)}`) : Promise.resolve(null)),
    [d.data?.agentId],
  );
  const action = useAction(d.reload);
  const c = d.data;
  usePoll(Boolean(c && (c.status === 'active' || c.counts.calling > 0)), d.reload);
  const act = (what: 'pause' | 'resume' | 'cancel') =>
    void action.act(async () => {
      await v1(`/campaigns/${enc}/${what}`, { method: 'POST' });
    });
  const outcomes = c ? Object.entries(c.counts.outcomes).filter(([, n]) => n > 0) : [];
  return (
    <section class="campaign">
      <PageHeader title={c?.name ?? 'Campaign'}>
        <Link href="/campaigns">All campaigns</Link>
      </PageHeader>
      <ErrorBox error={d.error} />
      {d.loading && !c ? <Loading what="the campaign" /> : null}
      {c ? (
        <>
          <p>
            <span class={`badge ${c.status}`} data-testid="campaign-status">
              {c.status}
            </span>{' '}
            <span data-testid="campaign-progress">{progress(c)}</span>
            {c.waiting ? <span class="muted"> ({WAITING[c.waiting]})</span> : null}.
          </p>
          <p class="muted">
            Agent <Link href={`/agents/${encodeURIComponent(c.agentId)}`}>{agent.data?.name ?? c.agentId}</Link>, from{' '}
            {c.from}; up to {c.maxConcurrency} at once, calling hours {c.callingHours.start}–{c.callingHours.end} (
            {c.timeZone}), {c.retry.maxAttempts === 1 ? 'one attempt' : `${c.retry.maxAttempts} attempts`} each.
          </p>
          <div class="row" role="group" aria-label="Campaign actions">
            {c.status === 'active' ? (
              <button type="button" disabled={action.busy} onClick={() => act('pause')}>
                Pause
              </button>
            ) : null}
            {c.status === 'paused' ? (
              <button type="button" class="primary" disabled={action.busy} onClick={() => act('resume')}>
                Resume
              </button>
            ) : null}
            {c.status === 'active' || c.status === 'paused' ? (
              <ConfirmButton label="Cancel the campaign" confirmLabel="Cancel it" onConfirm={() => act('cancel')} />
            ) : null}
          </div>
          <ErrorBox error={action.error} />
          {outcomes.length ? (
            <ul class="outcome-counts" aria-label="Outcomes">
              {outcomes.map(([k, n]) => (
                <li key={k}>
                  {OUTCOME_WORDS[k] ?? k}: {n}
                </li>
              ))}
            </ul>
          ) : null}
          <h2>Recipients</h2>
          <table class="stack recipients">
            <THead cols={['Phone', 'Outcome', 'Answered by', 'Calls', 'Next attempt']} />
            <tbody>
              {c.recipients.map((r) => (
                <tr key={r.id}>
                  <th scope="row">{r.phone}</th>
                  <td data-label="Outcome">
                    <RecipientOutcome r={r} />
                  </td>
                  <td data-label="Answered by">{r.answeredBy ?? '—'}</td>
                  <td data-label="Calls">
                    {r.attempts.length ? (
                      <ul class="plain">
                        {r.attempts.map((a) =>
                          a.sessionId ? (
                            <li key={a.id}>
                              <Link href={`/calls/${encodeURIComponent(a.sessionId)}`}>Call {a.attempt}</Link>
                            </li>
                          ) : (
                            <li key={a.id}>
                              Call {a.attempt}: {a.status}
                            </li>
                          ),
                        )}
                      </ul>
                    ) : (
                      'none yet'
                    )}
                  </td>
                  <td data-label="Next attempt">{r.state === 'pending' ? fmtDate(r.nextAttemptAt) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </section>
  );
}
