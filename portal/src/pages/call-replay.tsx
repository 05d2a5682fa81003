import { useEffect, useState } from 'preact/hooks';
import type { z } from 'zod';
import { v1 } from '../api.ts';
import type { CallReplay as CallReplaySchema } from '../../../shared/contracts/call-replay.ts';
import type { Page } from '../types.ts';
import { ErrorBox, fmtMs, Link, THead, useAction } from '../ui.tsx';

type CallReplay = z.infer<typeof CallReplaySchema>;
const POLL_MS = 1000;

const marks = (interrupted: boolean, cutIn: boolean) =>
  [interrupted ? 'interrupted' : '', cutIn ? 'cut in?' : ''].filter(Boolean).join(', ') || '—';

/**
 * "Replay this call" (issue 21): plays the call's caller turns again through the agent as it is now (or a version)
 * and shows, turn by turn, what the agent said then and now, its latency and interruptions then and now.
 */
export function CallReplayPanel(props: { callId: string; replayable: boolean; callVersion?: number | null }) {
  const [version, setVersion] = useState('');
  const [run, setRun] = useState<CallReplay | null>(null);
  const action = useAction();
  const enc = encodeURIComponent(props.callId);
  const running = run !== null && (run.status === 'queued' || run.status === 'running');
  // The last replay of this call, if any, shows until a new one is asked for.
  useEffect(() => {
    if (!props.replayable) return;
    v1<Page<CallReplay>>(`/calls/${enc}/replays`, { query: { limit: 1 } }).then(
      (p) => setRun((cur) => cur ?? p.data[0] ?? null),
      () => {},
    );
  }, [enc, props.replayable]);
  useEffect(() => {
    if (!running) return;
    const t = setTimeout(() => {
      v1<CallReplay>(`/calls/${enc}/replay/${encodeURIComponent(run.id)}`).then(setRun, action.setError);
    }, POLL_MS);
    return () => clearTimeout(t);
  }, [run, running]);
  const start = () =>
    action.act(async () => {
      setRun(null);
      const n = Number(version);
      setRun(await v1<CallReplay>(`/calls/${enc}/replay`, { method: 'POST', json: version ? { version: n } : {} }));
    });
  return (
    <>
      <h2>Replay</h2>
      {props.replayable ? (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void start();
          }}
        >
          <label>
            Agent version{' '}
            <input
              type="number"
              min={1}
              name="version"
              placeholder="now"
              value={version}
              onInput={(e) => setVersion((e.target as HTMLInputElement).value)}
            />
          </label>{' '}
          <button type="submit" disabled={action.busy || running}>
            Replay this call
          </button>
          {props.callVersion ? <span class="muted"> The call ran version {props.callVersion}.</span> : null}
        </form>
      ) : (
        <p class="muted">Only an ended, recorded call can be replayed.</p>
      )}
      <ErrorBox error={action.error} />
      {run ? <ReplayResult run={run} /> : null}
    </>
  );
}

function ReplayResult(props: { run: CallReplay }) {
  const r = props.run;
  return (
    <div class="replay" data-testid="call-replay">
      <p>
        <span class={`badge ${r.status}`}>{r.status}</span> version {r.agentVersion.then ?? '?'} then,{' '}
        {r.agentVersion.now} now · {r.progress.turnsDone} of {r.progress.turnsTotal} caller turns played
        {r.stt ? ` · STT: ${r.stt}` : ''}
        {r.llm ? ` · replies: ${r.llm}` : ''}
        {r.replaySessionId ? (
          <>
            {' · '}
            <Link href={`/calls/${encodeURIComponent(r.replaySessionId)}`}>the replay’s own call</Link>
          </>
        ) : null}
      </p>
      {r.error ? <p class="badge failed">{r.error}</p> : null}
      {r.summary ? (
        <p>
          {r.summary.changedReplies} of {r.summary.turns} replies changed · average latency{' '}
          {fmtMs(r.summary.avgLatencyMs.then)} → {fmtMs(r.summary.avgLatencyMs.now)} · interruptions{' '}
          {r.summary.interruptions.then} → {r.summary.interruptions.now} · suspected cut-ins {r.summary.cutIns.then} →{' '}
          {r.summary.cutIns.now}
        </p>
      ) : null}
      {r.turns.length ? (
        <table>
          <THead cols={['Turn', 'Caller', 'Agent then', 'Agent now', 'Latency', 'Interruptions']} />
          <tbody>
            {r.turns.map((t) => (
              <tr key={t.index} class={t.reply.changed ? 'changed' : undefined}>
                <th scope="row">
                  {t.index === 0 ? 'Greeting' : t.index}
                  {t.reply.changed ? <span class="badge failed"> changed</span> : null}
                </th>
                <td>
                  {t.caller.then ?? '—'}
                  {t.caller.now !== t.caller.then ? (
                    <span class="muted"> (heard now: {t.caller.now ?? '—'})</span>
                  ) : null}
                  {t.skipped ? <span class="muted"> (not replayed: {t.skipped})</span> : null}
                </td>
                <td>{t.reply.then ?? '—'}</td>
                <td>{t.reply.now ?? '—'}</td>
                <td>
                  {fmtMs(t.latencyMs.then)} → {fmtMs(t.latencyMs.now)}
                </td>
                <td>
                  {marks(t.interrupted.then, t.cutIn.then)} → {marks(t.interrupted.now, t.cutIn.now)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}
