import { useState } from 'preact/hooks';
import { API_BASE, v1 } from '../api.ts';
import { Waterfall } from '../charts/waterfall.tsx';
import { navigate, useRoute } from '../router.ts';
import type { Agent, Page } from '../types.ts';
import {
  ErrorBox,
  Field,
  fieldError,
  fmtDate,
  fmtMs,
  Link,
  Loading,
  PageHeader,
  THead,
  useAction,
  useAsync,
  usePoll,
} from '../ui.tsx';
import type { Check, ScenarioResultView, TestRun, TestRunDetail } from '../../../shared/contracts/agent-tests.ts';

/**
 * An agent's Tests page (docs/agent-tests.md): run scenario files against the agent offline (scripted LLM,
 * simulated STT, flite caller over the phone media path; free, no number dialled), follow each run's progress,
 * and read each scenario's result: its expectations with the reasons, both sides' transcript, the call's recording
 * and its latency waterfall.
 */

/** A starting point: the README's front-desk agent, one scenario that holds and one broken reply. */
const EXAMPLE = `# Format: docs/agent-tests.md · JSON Schema: GET /v1/agent-tests/schema
scenarios:
  - name: asks for Saturday hours with a pause mid-sentence
    llm:
      replies: ["We are open Monday to Friday, nine to five. On Saturday we are closed."]
    turns:
      - say: "Hi, are you open on Saturday morning?"
        pauseAfterWords: {3: 500}
        expect: {replyMatches: "(?i)saturday", noCutIn: true}
    expect: {replyNeverMatches: "(?i)price", endedBy: caller}
  - name: weekday hours on a noisy, lossy line
    llm:
      replies: ["We open at nine and close at five, Monday to Friday."]
    impairments: {noiseSnrDb: 25, packetLossPct: 2, jitterMs: 30, seed: 7}
    turns:
      - say: "What time do you open on Monday?"
        expect: {replyMatches: "(?i)nine"}
`;

const OPEN = new Set(['queued', 'running']);

/** localStorage key of an agent's last suite (per browser; the suite itself is never sent until a run). */
const suiteKey = (agentId: string) => `vap.agent-tests.suite.${agentId}`;
function loadSuite(agentId: string): string | null {
  try {
    return localStorage.getItem(suiteKey(agentId));
  } catch {
    return null;
  }
}
function saveSuite(agentId: string, text: string): void {
  try {
    localStorage.setItem(suiteKey(agentId), text);
  } catch {
    // Storage full or disabled: the suite is only kept for this page view.
  }
}
const statusClass = (s: string) => (s === 'passed' ? 'completed' : s === 'failed' || s === 'error' ? 'failed' : s);

export function AgentTestsPage(props: { id: string }) {
  const enc = encodeURIComponent(props.id);
  const { search } = useRoute();
  const selected = search.get('run');
  const runs = useAsync(() => v1<Page<TestRun>>(`/agents/${enc}/tests`, { query: { limit: 50 } }));
  const rows = runs.data?.data ?? [];
  usePoll(
    rows.some((r) => OPEN.has(r.status)),
    runs.reload,
  );
  const agent = useAsync(() => v1<Agent>(`/agents/${enc}`));
  // The last suite typed or uploaded for this agent stays across reloads (this browser only).
  const [text, setTextState] = useState(() => loadSuite(props.id) ?? EXAMPLE);
  const setText = (t: string) => (setTextState(t), saveSuite(props.id, t));
  const local = agent.data?.llmProvider === 'local';
  const start = useAction();
  const open = (runId: string) => navigate(`/agents/${enc}/tests?run=${encodeURIComponent(runId)}`);

  async function upload(e: Event) {
    const file = (e.currentTarget as HTMLInputElement).files?.[0];
    if (file) setText(await file.text());
  }

  return (
    <section class="agent-tests">
      <PageHeader title="Agent tests">
        <Link href={`/agents/${enc}`}>Back to the agent</Link>
      </PageHeader>
      <p class="muted" data-testid="tests-intro">
        Each scenario is played as a call against the agent as configured: a flite voice speaks the caller's lines over
        the real media-stream path (or the direct WebSocket protocol), a scripted LLM (<code>llm.replies</code>) and a
        simulated STT answer instead of vendors. Offline runs cost nothing and dial no number
        {/* Said once the agent is read: until then its mode is not known, and a guess could say "real cost" wrongly. */}
        {!agent.data ? (
          '.'
        ) : local ? (
          <span data-testid="tests-mode">
            ; this agent answers with the local reply engine (a knowledge lookup, not a language model), so a scenario
            without <code>llm.replies</code> is answered by it, offline and free too.
          </span>
        ) : (
          <span data-testid="tests-mode">
            ; a scenario without <code>llm.replies</code> runs on the agent's own LLM, at its vendor's real cost (marked
            as test traffic).
          </span>
        )}
      </p>

      <h2>Run scenarios</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void start.act(async () => {
            const run = await v1<TestRun>(`/agents/${enc}/tests`, { method: 'POST', json: { scenarios: text } });
            runs.reload();
            open(run.id);
          });
        }}
      >
        <Field
          label="Scenario file (YAML or JSON)"
          name="scenario-file"
          type="file"
          accept=".yaml,.yml,.json,text/yaml,application/json"
          onChange={upload}
        />
        <Field
          label="Scenarios"
          name="scenarios"
          as="textarea"
          rows={14}
          spellcheck={false}
          value={text}
          hint="The format and its JSON Schema: docs/agent-tests.md, GET /v1/agent-tests/schema."
          error={fieldError(start.error, 'scenarios')}
          onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
        />
        {fieldError(start.error, 'scenarios') ? null : <ErrorBox error={start.error} />}
        <p>
          <button type="submit" disabled={start.busy}>
            {start.busy ? 'Starting…' : 'Run these scenarios'}
          </button>{' '}
          <button type="button" class="secondary" onClick={() => setText(EXAMPLE)}>
            Load the example scenarios
          </button>
        </p>
      </form>

      <h2>Runs</h2>
      <ErrorBox error={runs.error} />
      {runs.loading && !runs.data ? <Loading what="test runs" /> : null}
      {runs.data && !rows.length ? <p class="muted">No test runs yet.</p> : null}
      {rows.length ? (
        <table data-testid="test-runs" class="stack">
          <THead cols={['Run', 'Started', 'Progress', 'Result', 'Status']} />
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} aria-current={r.id === selected ? 'true' : undefined}>
                <th scope="row">
                  <Link href={`/agents/${enc}/tests?run=${encodeURIComponent(r.id)}`}>{r.id}</Link>
                </th>
                <td data-label="Started">{fmtDate(r.createdAt)}</td>
                <td data-label="Progress">
                  <meter min={0} max={r.progress.total} value={r.progress.done} aria-label="Scenarios finished" />{' '}
                  {r.progress.done} of {r.progress.total}
                </td>
                <td data-label="Result">
                  {r.passed} passed, {r.failed} failed
                </td>
                <td data-label="Status">
                  <span class={`badge ${statusClass(r.status)}`}>{r.status}</span>
                  {r.error ? <div class="muted">{r.error}</div> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}

      {selected ? <RunDetail key={selected} runId={selected} /> : null}
    </section>
  );
}

function RunDetail(props: { runId: string }) {
  const run = useAsync(() => v1<TestRunDetail>(`/agent-tests/runs/${encodeURIComponent(props.runId)}`));
  const d = run.data;
  usePoll(Boolean(d && OPEN.has(d.status)), run.reload);
  // One scenario shows its audio, waterfall and transcript at a time (the first that failed, unless one is picked).
  const [picked, setPicked] = useState<number | null>(null);
  const firstFailed = d ? d.results.findIndex((r) => r && !r.passed) : -1;
  const openIdx = picked ?? (firstFailed >= 0 ? firstFailed : 0);
  return (
    <section aria-labelledby="run-title">
      <h2 id="run-title">
        Run {props.runId} {d ? <span class={`badge ${statusClass(d.status)}`}>{d.status}</span> : null}
      </h2>
      <ErrorBox error={run.error} />
      {run.loading && !d ? <Loading what="the run" /> : null}
      {d ? (
        <>
          <p>
            {d.progress.done} of {d.progress.total} scenarios finished · {d.passed} passed, {d.failed} failed ·{' '}
            {d.mode === 'metered'
              ? 'metered (the agent’s own vendor LLM where a scenario has no llm.replies; real cost, test traffic)'
              : 'offline (scripted LLM or the local reply engine, simulated STT, local TTS; no cost)'}
          </p>
          {d.error ? <p class="error">{d.error}</p> : null}
          {d.scenarios.map((s, i) => {
            const r = d.results[i] ?? null;
            return r ? (
              <ScenarioView key={i} result={r} open={i === openIdx} onOpen={() => setPicked(i)} />
            ) : (
              <article key={i} class="scenario">
                <h3>{s.name}</h3>
                <p class="muted">{OPEN.has(d.status) ? 'Waiting to run…' : 'Not run.'}</p>
              </article>
            );
          })}
        </>
      ) : null}
    </section>
  );
}

function Checks(props: { checks: Check[] }) {
  if (!props.checks.length) return null;
  return (
    <ul class="checks">
      {props.checks.map((c, k) => (
        <li key={k} class={c.passed ? 'ok' : 'error'}>
          {c.passed ? '✓' : '✗'} <code>{c.expectation}</code>: {c.reason}
        </li>
      ))}
    </ul>
  );
}

function ScenarioView(props: { result: ScenarioResultView; open: boolean; onOpen: () => void }) {
  const r = props.result;
  return (
    <article class="scenario" data-testid="scenario-result">
      <h3>
        <span class={`badge ${r.passed ? 'completed' : 'failed'}`}>{r.passed ? 'PASS' : 'FAIL'}</span> {r.name}
      </h3>
      <p class="muted">
        {r.transport} · {r.mode} · STT: {r.stt} · LLM: {r.llm} · {fmtMs(r.durationMs)} · cost{' '}
        {r.costCredits === null ? 'unknown' : `${r.costCredits} credits`} · {r.suspectedCutIns} suspected cut-ins
        {r.lostFrames ? ` · ${r.lostFrames} frames lost on the line` : ''}
        {r.sessionId ? (
          <>
            {' '}
            · <Link href={`/calls/${encodeURIComponent(r.sessionId)}`}>call page</Link>
          </>
        ) : null}
      </p>
      {r.error ? <p class="error">Could not run to the end: {r.error}</p> : null}
      {r.rootCause.length ? (
        <ul class="checks" data-testid="root-cause">
          {r.rootCause.map((why, k) => (
            <li key={k} class="error">
              Root cause: {why}
            </li>
          ))}
        </ul>
      ) : null}
      <Checks checks={r.checks} />
      {r.turns.length ? (
        // One card per turn on a phone (table.stack): the sentences wrap instead of scrolling sideways.
        <table class="stack turns">
          <THead cols={['Turn', 'Caller said', 'Platform heard', 'Agent replied', 'Latency', 'Checks']} />
          <tbody>
            {r.turns.map((t) => (
              <tr key={t.index}>
                <th scope="row">Turn {t.index + 1}</th>
                <td data-label="Caller said">{t.said}</td>
                <td data-label="Platform heard">{t.heard || <em>(nothing)</em>}</td>
                <td data-label="Agent replied">{t.reply || <em>(no reply)</em>}</td>
                <td data-label="Latency">
                  {fmtMs(t.latencyMs)}
                  {t.cutIn ? <span class="badge failed"> cut in</span> : null}
                  {t.backchannelInterruptions ? (
                    <span class="badge failed"> interrupted by a backchannel</span>
                  ) : t.backchannels ? (
                    <span class="badge"> talked through {t.backchannels} backchannels</span>
                  ) : null}
                </td>
                <td data-label="Checks">
                  <Checks checks={t.checks} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {props.open ? (
        <ScenarioCall result={r} />
      ) : (
        <p>
          <button type="button" class="secondary" onClick={props.onOpen}>
            Show its recording, waterfall and transcript
          </button>
        </p>
      )}
    </article>
  );
}

/** The call of one scenario: its recording (both legs), latency waterfall and transcript. */
function ScenarioCall(props: { result: ScenarioResultView }) {
  const r = props.result;
  // The recording route takes the CallSid (or the session id of a call without one), the recordingUrl's last part.
  const recordingId = r.recordingUrl?.split('/').pop();
  return (
    <>
      <h4>Recording</h4>
      {recordingId ? (
        <audio
          class="recording"
          controls
          preload="none"
          src={`${API_BASE}/recordings/${encodeURIComponent(recordingId)}/audio`}
          aria-label={`Recording of ${r.name} (left: caller, right: agent)`}
        />
      ) : (
        <p class="muted">No recording was stored for this call.</p>
      )}
      <h4>Latency waterfall</h4>
      <Waterfall turns={r.waterfall} />
      <h4>Transcript</h4>
      {r.transcript.length ? (
        <ol class="transcript">
          {r.transcript.map((t, k) => (
            <li key={k} class={t.speaker === 'assistant' ? 'agent' : 'you'}>
              <span class="who">{t.speaker === 'assistant' ? 'Agent' : 'Caller'}:</span> {t.text}
            </li>
          ))}
        </ol>
      ) : (
        <p class="muted">Nothing was recorded.</p>
      )}
    </>
  );
}
