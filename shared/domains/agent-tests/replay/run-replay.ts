import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SessionDetail } from '../../../contracts/sessions.ts';
import { replyOver } from '../reply-end.ts';
import { api, createSession, type Target } from '../session-api.ts';
import { TwilioCaller, tokenFromTwiml, wsUrl } from '../twilio-caller.ts';
import type { ReplayPlan } from './plan.ts';
import type { RecordedTurn } from './recorded-call.ts';

/** The platform a replay calls, as the agent's developer (`agentVersion`: the configuration version to run). */
export type ReplayTarget = Target;

/** The STT a replay's calls go through, when it is a simulated one: it is told what each caller turn says. */
export interface ScriptedStt {
  use(lines: string[]): void;
}

const LAST_REPLY_TIMEOUT_MS = 20_000;

/** The replay session's record once the platform has closed it (its trace is complete then). */
async function finishedSession(t: ReplayTarget, id: string, signal?: AbortSignal): Promise<SessionDetail> {
  for (let i = 0; i < 200; i++) {
    signal?.throwIfAborted();
    const r = await api<SessionDetail>(t, `/v1/observability/sessions/${encodeURIComponent(id)}`);
    if (r.status === 200 && r.body.status !== 'active') return r.body;
    await sleep(100);
  }
  throw new Error(`the replay session ${id} did not finish`);
}

export function turnsOf(d: SessionDetail): RecordedTurn[] {
  return d.turns.map((t) => ({
    idx: t.index,
    speaker: t.speaker === 'user' ? 'user' : 'assistant',
    text: t.text,
    startMs: t.startMs,
    endMs: t.endMs,
    latencyMs: t.latencyMs ?? null,
    interrupted: t.interrupted,
    cutIn: t.suspectedCutIn,
  }));
}

/** 10 s of 8 kHz PCM, whole 20 ms frames: the caller's `say` waits at most 15 s for its audio to go out. */
const SAY_CHUNK = 16 * 10_000;

async function sayAll(c: TwilioCaller, pcm: Buffer): Promise<void> {
  for (let i = 0; i < pcm.length; i += SAY_CHUNK) await c.say(pcm.subarray(i, i + SAY_CHUNK));
}

/**
 * Plays a recorded call's caller turns into a new phone session of the agent, each at its original time from the
 * call's start (the caller does not wait for the agent: a reply that now runs longer is talked over, as the caller
 * talked then), through the real Twilio media-stream path. No number is dialled: the session is created like
 * Twilio's webhook would, and this process is the caller. Returns the replay session's id and trace.
 */
export async function runReplay(
  target: ReplayTarget,
  plan: ReplayPlan,
  opts: { stt?: ScriptedStt; signal?: AbortSignal; onTurn?: (done: number) => void | Promise<void> } = {},
): Promise<{
  sessionId: string;
  turns: RecordedTurn[];
  engines: SessionDetail['engines'] | null;
  error: string | null;
}> {
  opts.stt?.use(plan.turns.map((t) => t.text));
  // Admitted like any call: while the fleet or the developer's concurrency is full, the replay waits for a slot.
  const created = await createSession(target, opts.signal);
  if (created.status !== 200) {
    const e = created.body as unknown as { error?: { message?: string } } | null;
    throw new Error(e?.error?.message ?? `session create: ${created.status}`);
  }
  if ((created.body as { admitted?: boolean }).admitted === false)
    throw new Error('the realtime fleet was at capacity');
  const sessionId = created.body.sessionId;
  const c = new TwilioCaller({
    url: wsUrl(target.url, '/v1/sessions/twilio/stream'),
    token: tokenFromTwiml(created.body.twiml),
  });
  let error: string | null = null;
  try {
    await c.start();
    const t0 = performance.now();
    for (const [k, turn] of plan.turns.entries()) {
      const wait = turn.atMs - (performance.now() - t0);
      if (wait > 0) await sleep(wait, undefined, { signal: opts.signal });
      if (c.closeCode !== null) throw new Error(`the agent ended the call before caller turn ${turn.n}`);
      await sayAll(c, turn.pcm);
      await opts.onTurn?.(k + 1);
    }
    const end = performance.now();
    // The last reply: wait for it to start, then for it to have played out (its end mark back: reply-end.ts).
    await c.until(() => c.media.some((m) => m.at > end) || c.closeCode !== null, LAST_REPLY_TIMEOUT_MS).catch(() => {});
    await c.until(() => replyOver(c), LAST_REPLY_TIMEOUT_MS).catch(() => {});
  } catch (e) {
    error = (e as Error).message;
  } finally {
    c.stop();
    c.close();
  }
  const detail = await finishedSession(target, sessionId, opts.signal);
  return { sessionId, turns: turnsOf(detail), engines: detail.engines ?? null, error };
}
