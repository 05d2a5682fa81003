import { END_REASON_WORDS } from '../../../shared/kernel/contracts/end-reasons.ts';
import { API_BASE, v1 } from '../api.ts';
import { Waterfall } from '../charts/waterfall.tsx';
import { CallReplayPanel } from './call-replay.tsx';
import type { CutInRates, RootCause, SessionDetail } from '../types.ts';
import { ErrorBox, fmtDate, fmtMs, Link, Loading, PageHeader, useAsync, THead } from '../ui.tsx';

const mmss = (ms: number) => {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

export function CallDetailPage(props: { id: string }) {
  const enc = encodeURIComponent(props.id);
  const detail = useAsync(() => v1<SessionDetail>(`/observability/sessions/${enc}`));
  const report = useAsync(() => v1<RootCause>(`/observability/sessions/${enc}/root-cause`));
  const d = detail.data;
  // The agent's suspected cut-in rate across its calls, next to this call's count (issue 25).
  const agentId = d?.agentId;
  const cutIns = useAsync(
    () =>
      agentId
        ? v1<CutInRates>(`/observability/sessions/cut-ins?agentId=${encodeURIComponent(agentId)}`)
        : Promise.resolve(null),
    [agentId],
  );
  const agentRate = cutIns.data?.data[0];
  // Recordings are keyed by the Twilio CallSid, or by the session id for browser (direct) calls.
  const recordingId = d ? (d.callId ?? d.id) : null;
  return (
    <section class="call">
      <PageHeader title="Call">
        <Link href="/calls">All calls</Link>
      </PageHeader>
      <ErrorBox error={detail.error} />
      {detail.loading && !d ? <Loading what="the call" /> : null}
      {d ? (
        <>
          <dl class="stats">
            <div>
              <dt>Started</dt>
              <dd>{fmtDate(d.startedAt)}</dd>
            </div>
            <div>
              <dt>Agent</dt>
              <dd>
                <Link href={`/agents/${encodeURIComponent(d.agentId)}`}>{d.agentId}</Link>
              </dd>
            </div>
            <div>
              <dt>Channel</dt>
              <dd>{d.channel}</dd>
            </div>
            <div>
              <dt>Status</dt>
              <dd>{d.status}</dd>
            </div>
            <div>
              <dt>Duration</dt>
              <dd>{mmss(d.metrics.totalDurationMs)}</dd>
            </div>
            <div>
              <dt>Average reply latency</dt>
              <dd>{fmtMs(d.metrics.avgTurnLatencyMs)}</dd>
            </div>
            <div>
              <dt title="Replies after which the caller went on speaking within 500 ms: the agent likely took a pause for the end of the turn">
                Suspected cut-ins
              </dt>
              <dd>
                {d.metrics.suspectedCutIns}
                {agentRate ? (
                  <span class="muted">
                    {' '}
                    · agent {(agentRate.rate * 100).toFixed(1)} % of {agentRate.replies} replies
                  </span>
                ) : null}
              </dd>
            </div>
            {d.answeredBy ? (
              <div>
                <dt>Answered by</dt>
                <dd>
                  {d.answeredBy}
                  {d.beepAtMs !== undefined ? ` (beep at ${mmss(d.beepAtMs)})` : ''}
                </dd>
              </div>
            ) : null}
            {d.transfer ? (
              <div>
                <dt>Transferred</dt>
                <dd>
                  {d.transfer.mode} to {d.transfer.target} ({d.transfer.to}) at {mmss(d.transfer.atMs)}
                </dd>
              </div>
            ) : null}
            {d.endReason ? (
              <div>
                <dt>Ended</dt>
                <dd data-testid="end-reason" title={d.endReason}>
                  {END_REASON_WORDS[d.endReason]}
                </dd>
              </div>
            ) : null}
            {d.engines ? (
              <div>
                <dt>Replies by</dt>
                <dd data-testid="reply-engine">{d.engines.llmLabel}</dd>
              </div>
            ) : null}
          </dl>

          <h2>Recording</h2>
          {d.recordingUrl && recordingId ? (
            <audio
              class="recording"
              controls
              preload="metadata"
              src={`${API_BASE}/recordings/${encodeURIComponent(recordingId)}/audio`}
              aria-label="Call recording (left: caller, right: agent)"
            />
          ) : (
            <p class="muted">No recording was stored for this call.</p>
          )}

          {recordingId ? (
            <CallReplayPanel
              callId={recordingId}
              replayable={Boolean(d.recordingUrl) && d.status !== 'active'}
              callVersion={d.agentVersion}
            />
          ) : null}

          <h2>Latency waterfall</h2>
          <Waterfall turns={d.turns} />

          <h2>Root cause</h2>
          <ErrorBox error={report.error} />
          {report.data ? (
            report.data.issues.length ? (
              <ul class="issues">
                {report.data.issues.map((i, k) => (
                  <li key={k}>
                    <strong>{i.type.replace(/_/g, ' ')}</strong>
                    {i.turn >= 0 ? ` (turn ${i.turn})` : ''}: {i.description}
                    <br />
                    <span class="muted">Try: {i.recommendation}</span>
                  </li>
                ))}
              </ul>
            ) : (
              <p class="ok">No issues found in this call.</p>
            )
          ) : report.loading ? (
            <Loading what="the report" />
          ) : null}

          <h2>Interruptions</h2>
          {d.interruptions?.length ? (
            <table>
              <THead cols={['Turn', 'At', 'Detection', 'Audio stopped after', 'Words heard after barge-in']} />
              <tbody>
                {d.interruptions.map((i, k) => (
                  <tr key={k}>
                    <th scope="row">{i.turn}</th>
                    <td>{mmss(i.atMs)}</td>
                    <td>{fmtMs(i.detectionMs)}</td>
                    <td>{fmtMs(i.stopMs)}</td>
                    <td>{i.bleedThroughWords}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p class="muted">The caller did not interrupt the agent.</p>
          )}

          <h2>Transcript</h2>
          {d.turns.length ? (
            <ol class="transcript">
              {d.turns.map((t) => (
                <li key={t.index} class={t.speaker === 'assistant' ? 'agent' : 'you'}>
                  <span class="ts">{mmss(t.startMs)}</span>{' '}
                  <span class="who">{t.speaker === 'assistant' ? 'Agent' : 'Caller'}:</span>{' '}
                  {t.text || <em>(silence)</em>}
                  {t.interrupted ? <span class="badge failed"> interrupted</span> : null}
                  {t.suspectedCutIn ? <span class="badge failed"> cut in?</span> : null}
                  {t.latencyMs !== undefined ? <span class="muted"> · replied in {fmtMs(t.latencyMs)}</span> : null}
                </li>
              ))}
            </ol>
          ) : (
            <p class="muted">No turns were recorded.</p>
          )}
          {d.toolExecutions?.length ? (
            <>
              <h2>Tool calls</h2>
              <ul>
                {d.toolExecutions.map((t, k) => (
                  <li key={k}>
                    Turn {t.turn}: <code>{t.name}</code> {t.ok ? 'ok' : `failed: ${t.error ?? ''}`} in{' '}
                    {fmtMs(t.durationMs)}
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
