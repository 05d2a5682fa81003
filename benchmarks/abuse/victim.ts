import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { tenantRequest, type Tenant } from '../../support/abuse/hostile-tenant.ts';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { tokenFromTwiml, wsUrl } from '../../support/realtime/helpers.ts';

/**
 * What the second developer — the one who did nothing wrong — sees: one live call over the real Twilio media path
 * (the voice-latency benchmark's synthetic caller), and a loop of cheap API requests.
 */

export interface CallResult {
  /** Caller's last audio frame sent → agent's first audio received, per turn. */
  turnMs: number[];
  /** Turns where the agent spoke over the caller's mid-sentence pause (no latency sample). */
  cutIns: number;
  sessionId: string;
  callSid: string;
}

/**
 * One call: the greeting, then each of `turns` (8 kHz PCM, what the caller says) after the agent's previous reply
 * has played out, timed as the caller hears it.
 */
export async function liveCall(t: Tenant, turns: Buffer[], from: string): Promise<CallResult> {
  const created = await tenantRequest(t, '/v1/sessions/twilio', {
    json: { agentId: t.agentId, from, to: '+15559990000' },
  });
  if (created.status !== 200) throw new Error(`POST /v1/sessions/twilio answered ${created.status}: ${created.text}`);
  const c = new TwilioCaller({
    url: wsUrl(t.url, '/v1/sessions/twilio/stream'),
    token: tokenFromTwiml(created.body.twiml as string),
  });
  const result: CallResult = { turnMs: [], cutIns: 0, sessionId: created.body.sessionId as string, callSid: c.call };
  // A reply is over when nothing plays and no agent audio came for 600 ms (its sentences arrive one by one).
  const quiet = () => !c.playing && performance.now() - (c.media.at(-1)?.at ?? 0) > 600;
  try {
    await c.start();
    await c.until(() => c.media.length > 0, 30_000);
    await c.until(() => c.marksEchoed.length >= 1 && quiet(), 30_000);
    for (const speech of turns) {
      const n = c.media.length;
      const end = await c.say(speech);
      await c.until(() => c.media.length > n, 30_000);
      if (c.media[n]!.at < end) result.cutIns++;
      else result.turnMs.push(c.media[n]!.at - end);
      await c.until(quiet, 30_000);
    }
  } finally {
    c.stop();
    c.close();
  }
  return result;
}

/** The call's recording key, once the platform has stored it (null when it had not within `timeoutMs`). */
export async function recordingKey(t: Tenant, sessionId: string, timeoutMs = 20_000): Promise<string | null> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { body } = await tenantRequest(t, `/v1/observability/sessions/${sessionId}`);
    if (body.recordingUrl) return `${t.developerId}/recordings/${sessionId}.wav`;
    await new Promise((r) => setTimeout(r, 200));
  }
  return null;
}

export interface RequestFigures {
  agents: number[];
  transcribe: number[];
  /** Answers other than 200, by route and status. */
  errors: string[];
}

/**
 * Until `stop()`: `GET /v1/agents` one after another 100 ms apart, and beside it `POST /v1/transcribe` of `clip`
 * (a short wav, the local STT) one after another 1 s apart, each timed from send to the last byte.
 */
export async function requestLoop(t: Tenant, clip: Buffer, stop: () => boolean): Promise<RequestFigures> {
  const figures: RequestFigures = { agents: [], transcribe: [], errors: [] };
  const loop = async (into: number[], gapMs: number, send: () => ReturnType<typeof tenantRequest>, what: string) => {
    while (!stop()) {
      const a = await send();
      if (a.status === 200) into.push(a.ms);
      else figures.errors.push(`${what} ${a.status}`);
      await new Promise((r) => setTimeout(r, gapMs));
    }
  };
  const transcribe = () => {
    const form = new FormData();
    form.append('file', new Blob([clip]), 'clip.wav');
    return tenantRequest(t, '/v1/transcribe', { body: form });
  };
  await Promise.all([
    loop(figures.agents, 100, () => tenantRequest(t, '/v1/agents'), 'GET /v1/agents'),
    loop(figures.transcribe, 1000, transcribe, 'POST /v1/transcribe'),
  ]);
  return figures;
}

/**
 * requestLoop on a worker thread (request-loop-worker.ts) until `stop()`: its own event loop and heap, so the
 * runner's other work (the abuser's clients, the doubles) is not in its timings; the machine's CPU still is.
 */
export function requestLoopApart(t: Tenant, clip: Buffer): { stop(): Promise<RequestFigures> } {
  const w = new Worker(new URL('./request-loop-worker.ts', import.meta.url), { workerData: { tenant: t, clip } });
  const figures = new Promise<RequestFigures>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  // A failure is told by stop(), not as an unhandled rejection while the call goes on.
  figures.catch(() => {});
  return {
    async stop() {
      w.postMessage('stop');
      const f = await figures;
      await w.terminate();
      return f;
    },
  };
}

/** The platform's own breakdown of the call's answered turns (its trace): where each turn's time went, ms. */
export interface TurnStages {
  latency: number[];
  endpoint: number[];
  stt: number[];
  llm: number[];
  tts: number[];
  overhead: number[];
}

/** The stages of `sessionId`'s answered turns, once its trace is stored (empty arrays when it was not in time). */
export async function turnStages(t: Tenant, sessionId: string, timeoutMs = 10_000): Promise<TurnStages> {
  const out: TurnStages = { latency: [], endpoint: [], stt: [], llm: [], tts: [], overhead: [] };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { status, body } = await tenantRequest(t, `/v1/observability/sessions/${sessionId}`);
    if (status === 200 && body.status !== 'active') {
      for (const turn of body.turns as Array<Record<string, number | string | undefined>>) {
        if (turn.speaker !== 'assistant' || typeof turn.latencyMs !== 'number') continue;
        out.latency.push(turn.latencyMs);
        out.stt.push(Number(turn.sttMs));
        out.llm.push(Number(turn.llmMs));
        out.tts.push(Number(turn.ttsMs));
        if (typeof turn.endpointMs === 'number') out.endpoint.push(turn.endpointMs);
        if (typeof turn.overheadMs === 'number') out.overhead.push(turn.overheadMs);
      }
      return out;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return out;
}
