import { END_REASON_WORDS } from '../../../shared/contracts/end-reasons.ts';
import { API_BASE, v1 } from '../api.ts';
import { Waterfall } from '../charts/waterfall.tsx';
import { callState, cutShortWords, KIND_WORDS } from '../call-words.ts';
import { CallOutcome } from './call-analysis.tsx';
import { CallReplayPanel } from './call-replay.tsx';
import type { Agent, CutInRates, RootCause, SessionDetail } from '../types.ts';
import { ErrorBox, fmtDate, fmtMs, Link, Loading, PageHeader, useAsync, usePoll, THead } from '../ui.tsx';

const mmss = (ms: number) => {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

/** How long after a call's end its page waits for the post-call analysis. */
const ANALYSIS_WAIT_MS = 5 * 60_000;

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
  // The agent by name (an archived or deleted agent keeps its id on the call).
  const agent = useAsync(
    () => (agentId ? v1<Agent>(`/agents/${encodeURIComponent(agentId)}`).catch(() => null) : Promise.resolve(null)),
    [agentId],
  );
  // The post-call analysis lands a moment after the call ends (a job on the CPU queue): while the agent asks for one
  // (or a message was taken) and it has not arrived, the page reads the call again, for at most five minutes.
  // Agent-test and replay calls, and calls that lost their process, are never analysed.
  const asks = Boolean((agent.data as { analysis?: unknown } | null | undefined)?.analysis) || Boolean(d?.takenMessage);
  const pending = Boolean(
    d?.endedAt &&
    !d.analysis &&
    asks &&
    d.kind !== 'test' &&
    d.kind !== 'replay' &&
    d.endReason !== 'worker-lost' &&
    Date.now() - Date.parse(d.endedAt) < ANALYSIS_WAIT_MS,
  );
  usePoll(pending, detail.reload);
  // Turns in time order (a voicemail's greeting and message can be stored out of it), and which turns a barge-in
  // was recorded on, so the waterfall, the transcript and the interruptions list use the same words.
  const turns = d ? [...d.turns].sort((x, y) => x.startMs - y.startMs || x.index - y.index) : [];
  const bargeIns = new Set((d?.interruptions ?? []).map((i) => i.turn));
  const cutShort = turns.filter((t) => t.interrupted && !bargeIns.has(t.index));
  const state = d ? callState(d) : null;
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
              <dd data-testid="agent">
                <Link href={`/agents/${encodeURIComponent(d.agentId)}`}>{agent.data?.name ?? d.agentId}</Link>
              </dd>
            </div>
            <div>
              <dt>Kind</dt>
              <dd data-testid="kind">{KIND_WORDS[d.kind]}</dd>
            </div>
            <div>
              <dt>State</dt>
              <dd>
                <span class={`badge ${state!.cls}`} data-testid="state">
                  {state!.words}
                </span>
              </dd>
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
                    · agent {(agentRate.rate * 100).toFixed(1)} % of {agentRate.replies}{' '}
                    {agentRate.replies === 1 ? 'reply' : 'replies'}
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

          <CallOutcome analysis={d.analysis} message={d.takenMessage} ended={d.status !== 'active'} pending={pending} />

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
          <Waterfall turns={turns} bargeInTurns={bargeIns} />

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
            <p class="muted" data-testid="barge-ins">
              The caller did not barge in.
            </p>
          )}
          {cutShort.length ? (
            <p class="muted" data-testid="cut-short">
              {cutShort.length === 1 ? 'The reply of turn' : 'The replies of turns'}{' '}
              {cutShort.map((t) => t.index).join(', ')} {cutShort.length === 1 ? 'was' : 'were'} cut short without a
              barge-in: the call ended, or a limit or the agent's goodbye stopped{' '}
              {cutShort.length === 1 ? 'it' : 'them'}.
            </p>
          ) : null}

          <h2>Transcript</h2>
          {turns.length ? (
            <ol class="transcript" aria-label="Transcript">
              {turns.map((t) => (
                <li key={t.index} class={t.speaker === 'assistant' ? 'agent' : 'you'}>
                  <span class="ts">{mmss(t.startMs)}</span>{' '}
                  <span class="who">{t.speaker === 'assistant' ? 'Agent' : 'Caller'}:</span>{' '}
                  {t.text || <em>{t.speaker === 'assistant' ? '(silence)' : '(speech heard, no words recognised)'}</em>}
                  {t.interrupted ? <span class="badge failed"> {cutShortWords(t.index, bargeIns)}</span> : null}
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
