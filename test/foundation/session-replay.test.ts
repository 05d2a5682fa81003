import twilio from 'twilio';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { DirectClient } from '../realtime/direct-client.ts';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { wsUrl } from '../../support/realtime/helpers.ts';

/**
 * Issue #24 findings 3 and 7: a direct-session token could be replayed for its whole lifetime (a second socket
 * overwrote the session record and its recording), a replayed signed Twilio connect made a new session each time,
 * and session sockets had no per-developer cap or time limits.
 */
const SID = 'ACtest0000000000000000000000000000';
const TOKEN = 'twilio-auth-token-test';
const PUBLIC = 'https://voice.example.com';

let p: TestPlatform;
let llm: OpenAiChatDouble;

beforeAll(async () => {
  llm = await startOpenAiChatDouble(() => ({ text: 'Happy to help.' }), { key: 'sk-replay', tokensPerSecond: 1000 });
  p = await startTestPlatform({
    roles: ['api', 'realtime'],
    env: {
      PUBLIC_BASE_URL: PUBLIC,
      OPENAI_BASE_URL: llm.baseUrl,
      OPENAI_API_KEY: llm.key,
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TOKEN,
      DEEPGRAM_API_KEY: 'dg-key',
      REALTIME_SESSIONS_PER_DEVELOPER: 'starter:1,pro:10,scale:10',
      REALTIME_AUTH_TIMEOUT_MS: '500',
      REALTIME_IDLE_TIMEOUT_SECONDS: '5',
    },
  });
}, 120_000);

afterAll(async () => {
  await p?.close();
  await llm?.close();
});

async function agentOf(key: string): Promise<string> {
  const a = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: { name: 'Web agent', firstMessage: 'Hi there.', llmModel: 'gpt-4o-mini' },
  });
  return ((await a.json()) as { id: string }).id;
}

async function directToken(key: string, agentId: string) {
  const r = await p.request('/v1/sessions/direct', { method: 'POST', key, json: { agentId } });
  expect(r.status).toBe(200);
  return (await r.json()) as { token: string; sessionId: string };
}

const sessionRow = async (id: string) =>
  (
    await p.infra.db.query(
      'select status, started_at, ended_at, end_reason, recording_key from rt_sessions where id = $1',
      [id],
    )
  ).rows[0] as { status: string; started_at: Date; ended_at: Date | null; recording_key: string | null };

describe('direct-session tokens are single use', () => {
  it('a second socket with a used token is refused with 4409; the first session and its recording stay', async () => {
    const { apiKey: key } = await p.developer('pro');
    const agentId = await agentOf(key);
    const t = await directToken(key, agentId);
    const url = wsUrl(p.url, `/v1/agents/${agentId}/session?token=${t.token}`);
    const first = new DirectClient(url);
    await waitUntil(() => first.events.some((e) => e.type === 'session.started'));
    // The start is written just after session.started is sent: the replay comes once it is recorded.
    const started = await waitUntil(async () => (await sessionRow(t.sessionId)).started_at);

    const replay = new DirectClient(url);
    await replay.closed;
    expect(replay.closeCode).toBe(4409);
    expect(replay.events).toEqual([expect.objectContaining({ type: 'error', code: 'session_token_used' })]);
    expect((await sessionRow(t.sessionId)).started_at).toEqual(started);

    // Caller audio is the recording's clock: a second of it, then the caller hangs up.
    for (let i = 0; i < 50; i++) first.ws.send(Buffer.alloc(640), { binary: true });
    await waitUntil(async () => {
      const r = await p.infra.db.query('select 1 from rt_sessions where id = $1 and status = $2', [
        t.sessionId,
        'active',
      ]);
      return r.rowCount === 1;
    });
    first.ws.send(JSON.stringify({ type: 'stop' }));
    await first.closed;
    const ended = await waitUntil(async () => {
      const row = await sessionRow(t.sessionId);
      return row.ended_at ? row : null;
    });
    expect(ended).toMatchObject({ status: 'completed', recording_key: expect.any(String) });
    const wav = await p.request(`/v1/recordings/${t.sessionId}`, { key });
    expect(wav.status).toBe(200);
    const bytes = (await wav.arrayBuffer()).byteLength;

    // After the end, too: the token opens nothing, and the record and recording are the first call's.
    const late = new DirectClient(url);
    await late.closed;
    expect(late.closeCode).toBe(4409);
    expect(await sessionRow(t.sessionId)).toEqual(ended);
    expect((await (await p.request(`/v1/recordings/${t.sessionId}`, { key })).arrayBuffer()).byteLength).toBe(bytes);
  });

  it('two sockets at once with one token: exactly one session starts', async () => {
    const { apiKey: key } = await p.developer('pro');
    const agentId = await agentOf(key);
    const t = await directToken(key, agentId);
    const url = wsUrl(p.url, `/v1/agents/${agentId}/session?token=${t.token}`);
    const clients = [new DirectClient(url), new DirectClient(url), new DirectClient(url)];
    await waitUntil(() => clients.filter((c) => c.closeCode === 4409).length === 2);
    const winner = clients.find((c) => c.closeCode === null)!;
    await waitUntil(() => winner.events.some((e) => e.type === 'session.started'));
    winner.ws.send(JSON.stringify({ type: 'stop' }));
    await winner.closed;
    const { rows } = await p.infra.db.query(`select count(*)::int as n from rt_sessions where id = $1`, [t.sessionId]);
    expect(rows[0].n).toBe(1);
  });

  it('a token is bound to its agent: another agent of the same developer refuses it', async () => {
    const { apiKey: key } = await p.developer('pro');
    const [a, b] = [await agentOf(key), await agentOf(key)];
    const t = await directToken(key, a);
    const c = new DirectClient(wsUrl(p.url, `/v1/agents/${b}/session?token=${t.token}`));
    await c.closed;
    expect(c.closeCode).toBe(1008);
    expect((await sessionRow(t.sessionId)).status).toBe('pending');
  });
});

function signedPost(path: string, params: Record<string, string>) {
  const sig = twilio.getExpectedTwilioSignature(TOKEN, PUBLIC + path, params);
  return fetch(p.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': sig },
    body: new URLSearchParams(params),
  });
}

const sessionOfTwiml = (twiml: string) => /<Parameter name="sessionId" value="(ses_[^"]+)"/.exec(twiml)?.[1];

describe('Twilio connect callbacks are idempotent by CallSid', () => {
  it('a replayed signed connect answers the same session, also when replays arrive at once', async () => {
    const { apiKey: key } = await p.developer('pro');
    const agentId = await agentOf(key);
    const res = await p.request('/v1/sessions/twilio/outbound', {
      method: 'POST',
      key,
      json: { agentId, from: '+15550001111', to: '+15550003333' },
    });
    const { taskId } = (await res.json()) as { taskId: string };
    const path = `/v1/sessions/twilio/task/${taskId}/connect`;
    const params = { CallSid: 'CA00000000000000000000000000000042', CallStatus: 'in-progress', AccountSid: SID };
    const answers = await Promise.all([1, 2, 3].map(() => signedPost(path, params)));
    const again = await signedPost(path, params);
    const twimls = await Promise.all([...answers, again].map((r) => r.text()));
    const ids = new Set(twimls.map(sessionOfTwiml));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^ses_/);
    const { rows } = await p.infra.db.query(`select count(*)::int as n from rt_sessions where task_id = $1`, [taskId]);
    expect(rows[0].n).toBe(1);
    const other = await signedPost(path, { ...params, CallSid: 'CA00000000000000000000000000000043' });
    expect(other.status).toBe(409);
  });
});

describe('per-developer cap on running sessions, and socket time limits', () => {
  it('a starter developer (cap 1) gets 429 at creation and 4429 at connect while a session runs', async () => {
    const { apiKey: key } = await p.developer('starter');
    const agentId = await agentOf(key);
    const t = await directToken(key, agentId);
    const first = new DirectClient(wsUrl(p.url, `/v1/agents/${agentId}/session?token=${t.token}`));
    await waitUntil(() => first.events.some((e) => e.type === 'session.started'));

    const more = await p.request('/v1/sessions/direct', { method: 'POST', key, json: { agentId } });
    expect(more.status).toBe(429);
    expect(((await more.json()) as { error: { code: string } }).error.code).toBe('concurrent_sessions_limited');
    const byKey = new DirectClient(wsUrl(p.url, `/v1/agents/${agentId}/session`), { authorization: `Bearer ${key}` });
    await byKey.closed;
    expect(byKey.closeCode).toBe(4429);

    // Another developer is not affected.
    const other = await p.developer('starter');
    const otherAgent = await agentOf(other.apiKey);
    const theirs = new DirectClient(wsUrl(p.url, `/v1/agents/${otherAgent}/session`), {
      authorization: `Bearer ${other.apiKey}`,
    });
    await waitUntil(() => theirs.events.some((e) => e.type === 'session.started'));
    theirs.ws.send(JSON.stringify({ type: 'stop' }));
    first.ws.send(JSON.stringify({ type: 'stop' }));
    await Promise.all([first.closed, theirs.closed]);
    // The slot is free again once the session ended.
    await waitUntil(async () => (await sessionRow(t.sessionId)).ended_at);
    expect((await p.request('/v1/sessions/direct', { method: 'POST', key, json: { agentId } })).status).toBe(200);
  });

  it('a Twilio stream socket that never sends its start is closed with 4408', async () => {
    const c = new TwilioCaller({ url: wsUrl(p.url, '/v1/sessions/twilio/stream'), token: undefined });
    await c.opened;
    await c.closed;
    expect(c.closeCode).toBe(4408);
    expect(c.closeReason).toBe('auth_timeout');
  });

  it('a direct socket that goes silent is closed with 4408 and its session ends', async () => {
    const { apiKey: key } = await p.developer('pro');
    const agentId = await agentOf(key);
    const ws = new WebSocket(wsUrl(p.url, `/v1/agents/${agentId}/session`), {
      headers: { authorization: `Bearer ${key}` },
    });
    const events: Array<Record<string, unknown>> = [];
    ws.on('message', (d, bin) => void (bin || events.push(JSON.parse(d.toString()) as Record<string, unknown>)));
    const code = await new Promise<number>((r) => ws.once('close', (c) => r(c)));
    expect(code).toBe(4408);
    expect(events.at(-1)).toMatchObject({ type: 'error', code: 'idle_timeout' });
    const started = events.find((e) => e.type === 'session.started') as { sessionId: string };
    await waitUntil(async () => (await sessionRow(started.sessionId)).ended_at);
  }, 30_000);
});
