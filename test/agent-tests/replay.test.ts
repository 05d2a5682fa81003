import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_KNOWLEDGE } from '../../shared/engines/llm/local-reply.ts';
import { reconcileCallReplays, REPLAY_STOPPED } from '../../shared/domains/agent-tests/replay/reconcile.ts';
import { newCallReplay } from '../../shared/domains/agent-tests/replay/request.ts';
import { startCallReplay } from '../../shared/domains/agent-tests/replay/store.ts';
import type { DeepgramLiveDouble } from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import { waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { FIRST_V1, FIRST_V2, FRONT_DESK, QUESTION, recordedPhoneCall, replayPlatform } from './replay-fixtures.ts';

/**
 * Call replay end to end: a real phone call (the Twilio media path, recorded as the platform records every call)
 * to a local-reply-engine agent, then the agent's first message and knowledge change, and the call's caller turns
 * are replayed by the cpu worker's job through the platform at their original times. The diff shows what changed;
 * replaying the version the call ran shows the same replies. Deepgram is the vendor double (it hears the caller's
 * words as scripted); nothing else is faked.
 */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let p: TestPlatform;
let dg: DeepgramLiveDouble;
let dev: { apiKey: string; developerId: string };
let other: { apiKey: string; developerId: string };
let agentId: string;
let callSid: string;

async function call(path: string, init: { method?: string; json?: unknown; key?: string } = {}) {
  const res = await p.request(path, { key: dev.apiKey, ...init });
  return { status: res.status, body: (await res.json()) as Json };
}

async function replayed(id: string, key = dev.apiKey): Promise<Json> {
  return waitUntil(
    async () => {
      const r = await call(`/v1/calls/${callSid}/replay/${id}`, { key });
      return ['completed', 'failed'].includes(r.body.status as string) && r.body;
    },
    90_000,
    200,
  );
}

beforeAll(async () => {
  ({ p, dg } = await replayPlatform());
  dev = await p.developer('pro');
  other = await p.developer('pro');
  const r = await call('/v1/agents/provision', { method: 'POST', json: FRONT_DESK });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  agentId = r.body.agent.id as string;
  expect(r.body.agent.version).toBe(1);
  ({ callSid } = await recordedPhoneCall(p, dev.apiKey, agentId));
}, 120_000);

afterAll(async () => {
  await p?.close();
  await dg?.close();
});

describe('call replay', () => {
  it('the recorded call names the agent version it ran', async () => {
    const d = await call(`/v1/observability/calls/${callSid}`);
    expect(d.body.agentVersion).toBe(1);
    const said = (d.body.turns as Json[]).map((t) => `${t.speaker}: ${t.text}`);
    expect(said[0]).toBe(`assistant: ${FIRST_V1}`);
    expect(said).toContain(`user: ${QUESTION}`);
  });

  // The next two replays are independent (each its own session and record; the cpu pool plays two at once,
  // WORKER_TESTS_CONCURRENCY) and each plays the call at its original times: they run side by side.
  it.concurrent(
    'replays the call against the changed agent: the diff shows the new greeting and the new answer',
    async ({ expect }) => {
      const put = await call(`/v1/agents/${agentId}`, {
        method: 'PUT',
        json: { firstMessage: FIRST_V2, collectionId: null },
      });
      expect(put.body.version).toBe(2);

      const started = await call(`/v1/calls/${callSid}/replay`, { method: 'POST', json: {} });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      expect(started.body).toMatchObject({ status: 'queued', agentId, agentVersion: { then: 1, now: 2 } });

      const r = await replayed(started.body.id as string);
      expect(r).not.toHaveProperty('error');
      expect(r.status).toBe('completed');
      expect(r.progress).toEqual({ turnsDone: 1, turnsTotal: 1 });
      expect(r.stt).toMatch(/^simulated \(the recorded call’s transcript/);
      expect(r.llm).toMatch(/Local reply engine/);
      const [greeting, answer] = r.turns as Json[];
      expect(greeting).toMatchObject({
        index: 0,
        caller: {},
        reply: { then: FIRST_V1, now: FIRST_V2, changed: true },
      });
      expect(greeting!.caller).toEqual({});
      expect(answer).toMatchObject({
        index: 1,
        caller: { then: QUESTION, now: QUESTION },
        reply: { changed: true, now: NO_KNOWLEDGE },
        interrupted: { then: false, now: false },
      });
      expect(answer).not.toHaveProperty('skipped');
      expect(answer!.reply.then).toMatch(/9am to 5pm/);
      expect(answer!.latencyMs.then).toEqual(expect.any(Number));
      expect(answer!.latencyMs.now).toEqual(expect.any(Number));
      expect(r.summary).toMatchObject({ turns: 2, changedReplies: 2 });

      // The replay is a session of its own, on version 2, with its own recording and trace.
      const s = await call(`/v1/observability/sessions/${r.replaySessionId}`);
      expect(s.body).toMatchObject({ agentId, agentVersion: 2 });
    },
    120_000,
  );

  it.concurrent(
    'replaying the version the call ran gives the same replies',
    async ({ expect }) => {
      const used = async () => (await call('/v1/usage')).body.credits.used as number;
      const before = await used();
      const started = await call(`/v1/calls/${callSid}/replay`, { method: 'POST', json: { version: 1 } });
      expect(started.status).toBe(202);
      const r = await replayed(started.body.id as string);
      expect(r.status).toBe('completed');
      // Offline (simulated STT, the local reply engine): test traffic, charged nothing.
      expect(await used()).toBe(before);
      expect(r.agentVersion).toEqual({ then: 1, now: 1 });
      expect((r.turns as Json[]).map((t) => t.reply.changed)).toEqual([false, false]);
      expect(r.turns[1].reply.now).toMatch(/9am to 5pm/);
    },
    120_000,
  );

  it("another developer's call and replay read as missing; bad input is a 4xx", async () => {
    const theirs = await call(`/v1/calls/${callSid}/replay`, { method: 'POST', json: {}, key: other.apiKey });
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe('not_found');
    const mine = await call(`/v1/calls/${callSid}/replay`, { method: 'POST', json: { version: 99 } });
    expect(mine.status).toBe(404);
    expect(mine.body.error.param).toBe('version');
    expect((await call(`/v1/calls/${callSid}/replay`, { method: 'POST', json: { llm: 1 } })).status).toBe(400);
    // Scripted replies speak the OpenAI protocol: a local-reply-engine agent cannot take them.
    const scripted = await call(`/v1/calls/${callSid}/replay`, { method: 'POST', json: { llm: { replies: ['Hi.'] } } });
    expect(scripted.status).toBe(409);
    expect(scripted.body.error.param).toBe('llm');
    expect((await call('/v1/calls/CAnope/replay', { method: 'POST', json: {} })).status).toBe(404);
    // No body at all: the agent as it is now.
    const bare = await p.request(`/v1/calls/${callSid}/replay`, { method: 'POST', key: dev.apiKey });
    expect(bare.status, await bare.clone().text()).toBe(202);
    const started = { body: (await bare.json()) as Json };
    expect(started.body.agentVersion).toEqual({ then: 1, now: 2 });
    const peek = await call(`/v1/calls/${callSid}/replay/${started.body.id}`, { key: other.apiKey });
    expect(peek.status).toBe(404);
    expect((await call(`/v1/calls/${callSid}/replays`, { key: other.apiKey })).status).toBe(404);
    // The call's replays, newest first, paged.
    const page = await call(`/v1/calls/${callSid}/replays?limit=1`);
    expect(page.body.data.map((x: Json) => x.id)).toEqual([started.body.id]);
    expect(page.body.hasMore).toBe(true);
    const rest = await call(`/v1/calls/${callSid}/replays?limit=10&cursor=${page.body.nextCursor}`);
    expect(rest.body.data).toHaveLength(2);
    await replayed(started.body.id as string);
  }, 120_000);
});

describe('call replay recovery', () => {
  it('a replay whose job was lost runs after all; one whose worker died is failed, not run twice', async () => {
    // Rows as the API leaves them, without their queue entries (a Redis flush), one of them already started.
    const lost = await newCallReplay(p.infra, dev.developerId, callSid, { version: 1 });
    const died = await newCallReplay(p.infra, dev.developerId, callSid, { version: 1 });
    expect(await startCallReplay(p.infra.db, died.id, { turnsTotal: 1, stt: 'simulated', llm: 'local' })).toBe(true);
    // The reconciler's pass, for rows of any age (the workers' own passes may get there first: same outcome).
    await reconcileCallReplays({ ...p.infra, config: { ...p.infra.config, RECONCILE_AFTER_MS: 0 } });
    const ran = await replayed(lost.id);
    expect(ran.status).toBe('completed');
    const failed = await replayed(died.id);
    expect(failed).toMatchObject({ status: 'failed', error: REPLAY_STOPPED });
    expect(failed).not.toHaveProperty('replaySessionId');
  }, 120_000);
});

/** `npm run cli -- calls replay` as a developer runs it: its own process and platform, the deployment's stores. */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/cli.ts', 'calls', 'replay', ...args], {
    env: {
      ...process.env,
      DATABASE_URL: p.config.DATABASE_URL,
      REDIS_PREFIX: p.config.REDIS_PREFIX,
      S3_EMBEDDED_DIR: p.config.S3_EMBEDDED_DIR,
      S3_EMBEDDED_PORT: '0',
      REALTIME_SESSION_SECRET: 'replay-cli-secret-replay-cli-secret-0123',
      // No vendor key at all: the CLI brings its own simulated STT, the agent answers with the local engine.
      DEEPGRAM_API_KEY: '',
      DEEPGRAM_BASE_URL: '',
      LOG_LEVEL: 'silent',
    },
    timeout: 150_000,
  }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

describe('calls replay CLI', () => {
  it('prints the per-turn diff against the agent now, and the replay resource with --json for a version', async () => {
    // The two replays are independent (each its own process, platform and replay record): run side by side, as two
    // developers could, rather than one after the other (each boots a platform and replays the call in real time).
    const [now, v1] = await Promise.all([cli([callSid]), cli([callSid, '--version', '1', '--json'])]);
    expect(now.stderr).toBe('');
    expect(now.code).toBe(0);
    expect(now.stdout).toMatch(/version 1 then, 2 now\): completed/);
    expect(now.stdout).toMatch(/STT: simulated \(the recorded call’s transcript/);
    expect(now.stdout).toContain(`≠ greeting\n    agent then:  ${FIRST_V1}\n    agent now:   ${FIRST_V2}`);
    expect(now.stdout).toMatch(/≠ turn 1\n {4}caller then: What are your opening hours\?/);

    expect(v1.code).toBe(0);
    const r = JSON.parse(v1.stdout) as Json;
    expect(r).toMatchObject({
      status: 'completed',
      agentVersion: { then: 1, now: 1 },
      stt: expect.stringMatching(/simulated/),
    });
    expect(r.turns[1].reply).toMatchObject({ changed: false, now: expect.stringMatching(/9am to 5pm/) });
    // Stored like an API replay: the developer can read it over the API.
    expect((await call(`/v1/calls/${callSid}/replay/${r.id}`)).body.status).toBe('completed');
  }, 240_000);

  it('exits 2 on an unknown call or version, before any call is placed', async () => {
    const [unknown, badVersion] = await Promise.all([cli(['CAnope']), cli([callSid, '--version', '42'])]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no call CAnope/);
    expect(badVersion.code).toBe(2);
    expect(badVersion.stderr).toMatch(/agent version/);
  }, 120_000);
});
