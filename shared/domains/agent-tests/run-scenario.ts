import { performance } from 'node:perf_hooks';
import type { Scenario } from '../../contracts/agent-tests.ts';
import { rmsToDbfs } from '../../kernel/audio/noise-floor.ts';
import { pcmToInt16 } from '../../kernel/audio/pcm.ts';
import { resamplePcm } from '../../kernel/audio/resampler.ts';
import type { SessionDetail as PlatformSession } from '../../contracts/sessions.ts';
import { backchannelSpeaker, type BackchannelSpeaker } from './backchannels.ts';
import { callerSpeech, type AudioLoader, type TurnSpeech } from './caller-speech.ts';
import { CALL_TRANSPORTS } from './call-transport.ts';
import { rootCause } from './diagnose.ts';
import { evaluate, type Observed } from './evaluate.ts';
import { lineImpairment, speechRms, type LineImpairment } from './impairments.ts';
import { engineLabels } from './labels.ts';
import { testMode } from './platform-config.ts';
import type { ScenarioPlatform } from './platform-slot.ts';
import type { ScenarioResult, WaterfallTurn } from './results.ts';
import { replyOver } from './reply-end.ts';
import { api, type Target } from './session-api.ts';

/**
 * Runs one scenario as one call: a session is created for the agent (a phone call's TwiML, no number dialled, or a
 * direct-protocol token), the scripted caller connects over the scenario's transport, waits for the greeting,
 * speaks each turn in real time (pauses included, over the seeded bad line) and listens to the agent like the far
 * end plays it. The transport is the only thing that differs (call-transport.ts). Afterwards the platform's own
 * record of the call (transcripts, tool executions, end reason, the engines it ran on) and the call's own cost
 * are read back through the API and every expectation is checked (evaluate.ts).
 */

const REPLY_TIMEOUT_MS = 20_000;

interface SessionDetail {
  status: string;
  startedAt: string | null;
  endReason: string | null;
  recordingUrl: string | null;
  turns: WaterfallTurn[];
  toolExecutions: { name: string; ok: boolean }[];
  engines?: PlatformSession['engines'];
  cost?: PlatformSession['cost'];
}

/**
 * What the call itself cost: the credits of its own ledger rows (the session's `cost`), read once they are settled
 * (the session's record is closed a moment before its holds are settled to the real usage). Never the developer's
 * usage growth: other calls of a shared account at the same time are not this call's.
 */
async function callCost(t: Target, id: string, first: SessionDetail | null): Promise<number | null> {
  let cost = first?.cost ?? null;
  for (let i = 0; i < 30 && cost && !cost.settled; i++) {
    await new Promise((res) => setTimeout(res, 200));
    const r = await api<SessionDetail>(t, `/v1/observability/sessions/${id}`).catch(() => null);
    if (r?.status === 200) cost = r.body.cost ?? cost;
  }
  return cost ? cost.credits : null;
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

/**
 * How many times faster than real time the caller plays the agent's audio in this scenario (far-end.ts): what the
 * run asked for (1 for every run a developer starts; more only where the platform's own tests ask for it, for
 * scenarios whose subject is what the call says and leaves), but real time whenever the scenario's subject is
 * timing against the agent's speech: a barge-in so far into a reply, backchannels said into it as it plays, or a
 * latency bound.
 */
export function playoutFor(scenario: Scenario, asked: number): number {
  const timed = scenario.turns.some((t) => t.bargeInAfterMs !== undefined || t.expect?.maxLatencyMs !== undefined);
  return timed || scenario.impairments?.backchannels ? 1 : asked;
}

export async function runScenario(
  target: Target,
  scenario: Scenario,
  on: Pick<ScenarioPlatform, 'vendors' | 'kind'>,
  opts: {
    file: string;
    signal?: AbortSignal;
    loadAudio?: AudioLoader;
    /** How many times faster than real time the agent's audio may be played (playoutFor); 1 when absent. */
    playout?: number;
  },
): Promise<ScenarioResult> {
  const t0 = performance.now();
  const labels = engineLabels(scenario, on.kind);
  const result: ScenarioResult = {
    name: scenario.name,
    file: opts.file,
    passed: false,
    transport: scenario.transport,
    stt: labels.stt(null),
    llm: labels.llm(null),
    mode: testMode(on.kind),
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
    rootCause: [],
  };
  const done = () => ((result.durationMs = Math.round(performance.now() - t0)), result);

  let speech: TurnSpeech[];
  let backchannels: BackchannelSpeaker;
  try {
    const caller = await callerSpeech(scenario, opts.loadAudio);
    speech = caller.turns;
    backchannels = await backchannelSpeaker(
      scenario.impairments,
      caller.voice,
      (word) => on.vendors.hearBackchannel(word),
      scenario.callerVoice,
    );
  } catch (e) {
    result.error = `caller audio: ${(e as Error).message}`;
    return done();
  }
  const transport = CALL_TRANSPORTS[scenario.transport];
  let line: LineImpairment | null = null;
  const speechLevel = speechRms(Buffer.concat(speech.map((s) => s.pcm)));
  if (scenario.impairments) {
    // Babble is mixed from the scenario's own caller lines (several at once, from seeded offsets).
    const voices =
      scenario.impairments.noise?.type === 'babble'
        ? speech.map((s) => pcmToInt16(resamplePcm(s.pcm, 8000, transport.rate)))
        : [];
    line = lineImpairment(scenario.impairments, speechLevel, transport.codec, voices, transport.rate);
  }
  // The simulated STT hears speech over the line's noise, as a real recogniser does.
  on.vendors.use(
    scenario,
    speech.map((s) => s.script),
    line?.noiseRms ?? 0,
  );

  // The scenario's variables fill the agent's {{names}} as a real call's would.
  const connected = await transport.connect(
    scenario.variables ? { ...target, variables: scenario.variables } : target,
    line,
    opts.signal,
    playoutFor(scenario, opts.playout ?? 1),
  );
  if ('error' in connected) {
    result.error = connected.error;
    return done();
  }
  result.sessionId = connected.sessionId;
  const c = connected.caller;
  const observed: Observed = { turnStartsWall: [], latencies: [], cutIns: [], backchannels: backchannels.said };
  /** Index in c.media of each turn's reply's first frame (the greeting's is 0). */
  const replyStarts: number[] = [];
  // A reply is over when its end mark has played (reply-end.ts): its sentences arrive one by one, each synthesized in
  // turn, so a gap is not the end (hanging up in one would cut the recorded reply short).
  const replyDone = () => replyOver(c);
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
        await backchannels.over(c, k - 1, c.until(replyDone, 60_000));
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
        c.until(replyDone, 60_000).catch(() => {}),
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
  result.costCredits = result.sessionId ? await callCost(target, result.sessionId, detail) : null;
  result.endReason = detail?.endReason ?? null;
  result.stt = labels.stt(detail?.engines ?? null);
  result.llm = labels.llm(detail?.engines ?? null);
  result.transcript = (detail?.turns ?? []).map((t) => ({ speaker: t.speaker, text: t.text }));
  result.recordingUrl = detail?.recordingUrl ?? null;
  result.waterfall = detail?.turns ?? [];

  result.suspectedCutIns = result.waterfall.filter((t) => t.suspectedCutIn).length;
  Object.assign(result, evaluate(scenario, observed, detail, result));
  // Which side failed: the simulated STT only when the call ran on it (a direct session's local STT is the agent's).
  const simulated = detail?.engines?.stt !== 'default' && !(scenario.transport === 'websocket' && !detail?.engines);
  result.rootCause = rootCause(result, observed.latencies.length, {
    simulatedLinesHeard: simulated ? on.vendors.linesHeard : null,
    floorDbfs: line ? line.floorDbfs : null,
    speechDbfs: rmsToDbfs(speechLevel),
  });
  result.passed =
    result.error === null && [...result.turns.flatMap((t) => t.checks), ...result.checks].every((x) => x.passed);
  return done();
}
