import { performance } from 'node:perf_hooks';
import * as mulaw from '../../kernel/audio/mulaw.ts';
import type { Scenario } from '../../kernel/contracts/agent-tests.ts';
import { backchannelSpeaker, type BackchannelSpeaker } from './backchannels.ts';
import { callerSpeech, type AudioLoader, type TurnSpeech } from './caller-speech.ts';
import { evaluate, type Observed } from './evaluate.ts';
import { ImpairedCaller } from './impaired-caller.ts';
import { tokenFromTwiml, wsUrl } from './twilio-caller.ts';
import { lineImpairment, speechRms, type LineImpairment } from './impairments.ts';
import { SCRIPTED_LLM_LABEL, SIMULATED_STT_LABEL, type OfflineVendors } from './offline-vendors.ts';
import type { ScenarioResult, WaterfallTurn } from './results.ts';

/**
 * Runs one scenario as a phone call: a Twilio session is created for the agent (the TwiML Twilio would fetch; no
 * number is dialled), the scripted caller connects to the real media-stream socket, waits for the greeting, speaks
 * each turn in real time (pauses included, over the seeded bad line) and listens to the agent like Twilio plays it.
 * Afterwards the platform's own record of the call (transcripts, tool executions, end reason) and the developer's
 * usage are read back through the API and every expectation is checked (evaluate.ts).
 */
export interface Target {
  /** The platform's base URL (api and realtime roles). */
  url: string;
  apiKey: string;
  agentId: string;
  /** The agent configuration version to call (agent versions); the agent as it is when absent. */
  agentVersion?: number;
}

/**
 * A reply is over when nothing plays and no agent audio came for this long: its sentences arrive one by one, each
 * synthesized in turn, so a short gap is not the end (hanging up in one would cut the recorded reply short).
 */
const QUIET_MS = 1500;
const REPLY_TIMEOUT_MS = 20_000;

interface SessionDetail {
  status: string;
  startedAt: string | null;
  endReason: string | null;
  recordingUrl: string | null;
  turns: WaterfallTurn[];
  toolExecutions: { name: string; ok: boolean }[];
}

async function api<T>(
  t: Target,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: T; retryAfterS: number | null }> {
  const res = await fetch(`${t.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', ...init.headers },
  });
  const text = await res.text();
  const retryAfter = Number(res.headers.get('retry-after'));
  return {
    status: res.status,
    body: (text ? JSON.parse(text) : null) as T,
    retryAfterS: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
  };
}

/**
 * How long a scenario waits for the platform to admit its call: a test never takes a call slot the fleet does not
 * have (503 over capacity) or the developer's concurrency allows (429); it waits for one, as a caller's retry would.
 */
const ADMISSION_WAIT_MS = 120_000;

/**
 * POST /v1/sessions/twilio, waiting (Retry-After, else 1 s) while the platform answers 503 or 429. `extra` joins the
 * body (a call replay's `agentVersion`).
 */
export async function createSession(t: Target, signal?: AbortSignal, extra: Record<string, unknown> = {}) {
  const deadline = performance.now() + ADMISSION_WAIT_MS;
  for (;;) {
    const r = await api<{ twiml: string; sessionId: string; message?: string }>(t, '/v1/sessions/twilio', {
      method: 'POST',
      body: JSON.stringify({ agentId: t.agentId, from: '+15550100001', to: '+15550100002', ...extra }),
      signal,
    });
    if ((r.status !== 503 && r.status !== 429) || performance.now() > deadline || signal?.aborted) return r;
    await new Promise((res) => setTimeout(res, Math.min(10, r.retryAfterS ?? 1) * 1000));
  }
}

async function creditsUsed(t: Target): Promise<number | null> {
  const r = await api<{ credits?: { used?: number } }>(t, '/v1/usage').catch(() => null);
  return r?.status === 200 && typeof r.body.credits?.used === 'number' ? r.body.credits.used : null;
}

/** The session's record once the platform has closed it (the trace is written as the session ends). */
async function finishedSession(t: Target, id: string, signal?: AbortSignal): Promise<SessionDetail | null> {
  let last: SessionDetail | null = null;
  for (let i = 0; i < 100 && !signal?.aborted; i++) {
    const r = await api<SessionDetail>(t, `/v1/observability/sessions/${id}`);
    if (r.status === 200) {
      last = r.body;
      if (last.status !== 'active') return last;
    }
    await new Promise((res) => setTimeout(res, 100));
  }
  return last;
}

export async function runScenario(
  target: Target,
  scenario: Scenario,
  vendors: OfflineVendors,
  opts: { file: string; signal?: AbortSignal; loadAudio?: AudioLoader },
): Promise<ScenarioResult> {
  const t0 = performance.now();
  const result: ScenarioResult = {
    name: scenario.name,
    file: opts.file,
    passed: false,
    transport: scenario.transport,
    stt: scenario.impairments?.sttWordErrorRate
      ? `${SIMULATED_STT_LABEL}, ${Math.round(scenario.impairments.sttWordErrorRate * 100)} % word errors`
      : SIMULATED_STT_LABEL,
    llm: scenario.llm ? SCRIPTED_LLM_LABEL : 'agent’s own LLM (not run: see error)',
    sessionId: null,
    endReason: null,
    transcript: [],
    turns: [],
    checks: [],
    costCredits: null,
    lostFrames: 0,
    durationMs: 0,
    error: null,
    recordingUrl: null,
    waterfall: [],
    suspectedCutIns: 0,
    backchannels: [],
  };
  const done = () => ((result.durationMs = Math.round(performance.now() - t0)), result);
  // Offline runs only, for now: the platform under test is pointed at the offline vendors when it boots.
  if (scenario.transport !== 'twilio') {
    result.error = `transport ${scenario.transport} is not supported by this runner yet (twilio only)`;
    return done();
  }
  if (!scenario.llm) {
    result.error = 'offline runs need llm.replies (a run with the agent’s own LLM is not supported yet)';
    return done();
  }

  let speech: TurnSpeech[];
  let backchannels: BackchannelSpeaker;
  try {
    const caller = await callerSpeech(scenario, opts.loadAudio);
    speech = caller.turns;
    backchannels = await backchannelSpeaker(scenario.impairments, caller.voice, (word) =>
      vendors.hearBackchannel(word),
    );
  } catch (e) {
    result.error = `caller audio: ${(e as Error).message}`;
    return done();
  }
  let line: LineImpairment | null = null;
  if (scenario.impairments) {
    line = lineImpairment(scenario.impairments, speechRms(Buffer.concat(speech.map((s) => s.pcm))), mulaw);
  }
  vendors.use(
    scenario,
    speech.map((s) => s.script),
  );
  const before = await creditsUsed(target);

  const created = await createSession(
    target,
    opts.signal,
    target.agentVersion ? { agentVersion: target.agentVersion } : {},
  );
  if (created.status !== 200) {
    result.error = `session create answered ${created.status}: ${JSON.stringify(created.body)}`;
    return done();
  }
  result.sessionId = created.body.sessionId;
  const c = new ImpairedCaller(
    { url: wsUrl(target.url, '/v1/sessions/twilio/stream'), token: tokenFromTwiml(created.body.twiml) },
    line,
  );
  const observed: Observed = { turnStartsWall: [], latencies: [], cutIns: [], backchannels: backchannels.said };
  /** Index in c.media of each turn's reply's first frame (the greeting's is 0). */
  const replyStarts: number[] = [];
  const quiet = () => !c.playing && performance.now() - (c.media.at(-1)?.at ?? 0) > QUIET_MS;
  try {
    await c.start();
    await c
      .until(() => c.media.length > 0, REPLY_TIMEOUT_MS)
      .catch(() => {
        throw new Error('no greeting from the agent');
      });
    for (let k = 0; k < scenario.turns.length; k++) {
      if (opts.signal?.aborted) throw new Error('aborted');
      const turn = scenario.turns[k]!;
      // Let the agent finish what it is saying, or barge in that far into it (backchannels meanwhile, if any).
      if (turn.bargeInAfterMs !== undefined) {
        const startedAt = c.media[k === 0 ? 0 : (replyStarts[k - 1] ?? 0)]?.at ?? performance.now();
        const at = startedAt + turn.bargeInAfterMs;
        await backchannels.over(
          c,
          k - 1,
          c.until(() => performance.now() >= at, 60_000).catch(() => {}),
          at,
        );
      } else {
        await backchannels.over(c, k - 1, c.until(quiet, 60_000));
      }
      if (turn.silenceBeforeMs) await new Promise((r) => setTimeout(r, turn.silenceBeforeMs));
      const n = c.media.length;
      observed.turnStartsWall.push(Date.now());
      const sent = performance.now();
      const end = await c.say(speech[k]!.pcm);
      // A reply that began before the caller's last word is a cut-in (the agent took a pause for the end).
      // On a barge-in turn, the audio still arriving from the interrupted reply is not a new reply.
      const fresh = c.media
        .slice(n)
        .filter(
          (m) => m.at >= sent && (turn.bargeInAfterMs === undefined || c.clears.some((x) => x >= sent && x <= m.at)),
        );
      const early = fresh.find((m) => m.at < end);
      observed.cutIns.push(Boolean(early));
      replyStarts[k] = c.media.length;
      await c.until(() => c.media.some((m, i) => i >= n && m.at >= end), REPLY_TIMEOUT_MS).catch(() => {});
      const first = c.media.find((m, i) => i >= n && m.at >= end);
      if (first) replyStarts[k] = c.media.indexOf(first);
      observed.latencies.push(early ? null : first ? Math.round(first.at - end) : null);
    }
    // The caller hangs up once the last reply has played, unless the agent is expected to end the call.
    if (scenario.expect?.endedBy === 'agent') {
      const closed = Promise.race([c.closed, new Promise((r) => setTimeout(r, REPLY_TIMEOUT_MS))]);
      await backchannels.over(c, scenario.turns.length - 1, closed);
    } else {
      await backchannels.over(
        c,
        scenario.turns.length - 1,
        c.until(quiet, 60_000).catch(() => {}),
      );
    }
  } catch (e) {
    result.error = (e as Error).message;
  } finally {
    c.stop();
    c.close();
  }
  result.lostFrames = line?.lost ?? 0;
  const detail = await finishedSession(target, result.sessionId, opts.signal);
  const after = await creditsUsed(target);
  result.costCredits = before !== null && after !== null ? Math.round((after - before) * 1000) / 1000 : null;
  result.endReason = detail?.endReason ?? null;
  result.transcript = (detail?.turns ?? []).map((t) => ({ speaker: t.speaker, text: t.text }));
  result.recordingUrl = detail?.recordingUrl ?? null;
  result.waterfall = detail?.turns ?? [];

  result.suspectedCutIns = result.waterfall.filter((t) => t.suspectedCutIn).length;
  Object.assign(result, evaluate(scenario, observed, detail, result));
  result.passed =
    result.error === null && [...result.turns.flatMap((t) => t.checks), ...result.checks].every((x) => x.passed);
  return done();
}
