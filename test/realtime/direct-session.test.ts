import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isReplyEndMark } from '../../shared/contracts/reply-end-mark.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { DirectClient } from './direct-client.ts';
import { fliteUtterance, wsUrl } from '../../support/realtime/helpers.ts';

let p: TestPlatform;
let llm: OpenAiChatDouble;
let key: string;
let agentId: string;

beforeAll(async () => {
  llm = await startOpenAiChatDouble(() => ({ text: 'Happy to help.' }), {
    key: 'sk-test-realtime',
    tokensPerSecond: 1000,
  });
  p = await startTestPlatform({
    env: {
      REALTIME_SESSION_SECRET: 'direct-secret-direct-secret-0123456789ab',
      OPENAI_BASE_URL: llm.baseUrl,
      OPENAI_API_KEY: llm.key,
      OUTBOUND_ALLOWLIST: '127.0.0.1',
    },
  });
  ({ apiKey: key } = await p.developer('pro'));
  const a = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: { name: 'Web agent', firstMessage: 'Hi there.', llmModel: 'gpt-4o-mini' },
  });
  agentId = ((await a.json()) as { id: string }).id;
}, 120_000);

afterAll(async () => {
  await p?.close();
  await llm?.close();
});

describe('WS /v1/agents/:id/session (direct protocol)', () => {
  it('API key auth; greeting as binary PCM with marks; local default STT hears 16 kHz speech; the agent answers', async () => {
    const c = new DirectClient(wsUrl(p.url, `/v1/agents/${agentId}/session?outputRate=24000`), {
      authorization: `Bearer ${key}`,
    });
    await c.opened;
    await waitUntil(() => c.events.some((e) => e.type === 'mark'));
    expect(c.events[0]).toMatchObject({ type: 'session.started', agentId, inputRate: 16000, outputRate: 24000 });
    const greetingBytes = c.audioBytes;
    expect(greetingBytes).toBeGreaterThan(24000); // > 0.5 s at 24 kHz
    expect(greetingBytes % 960).toBe(0); // whole 20 ms frames at 24 kHz
    await c.speak(await fliteUtterance('Hello, what time do you open tomorrow morning?', 16000));
    await waitUntil(() => c.events.some((e) => e.type === 'transcript' && e.final), 20_000);
    // The reply's end mark (the greeting sent one too): its audio has all been sent by then.
    const ends = () => c.events.filter((e) => e.type === 'mark' && isReplyEndMark(String(e.name))).length;
    await waitUntil(() => ends() >= 2, 20_000);
    expect(c.audioBytes).toBeGreaterThan(greetingBytes);
    const sessionId = (c.events[0] as { sessionId: string }).sessionId;
    c.ws.send(JSON.stringify({ type: 'stop' }));
    await c.closed;
    expect(c.closeCode).toBe(1000);
    const d = await waitUntil(async () => {
      const r = await p.request(`/v1/observability/sessions/${sessionId}`, { key });
      const b = (await r.json()) as {
        status: string;
        channel: string;
        turns: Array<{ speaker: string; text: string }>;
        recordingUrl: string | null;
      };
      return b.status === 'completed' ? b : null;
    });
    expect(d.channel).toBe('direct');
    expect(d.turns.map((t) => t.speaker)).toEqual(['assistant', 'user', 'assistant']);
    expect(d.turns[1]!.text.length).toBeGreaterThan(0);
    expect(d.turns[2]!.text).toBe('Happy to help.');
    // Regression: a direct session (no CallSid) reported recordingUrl null although its recording was stored.
    expect(d.recordingUrl).toBe(`/v1/recordings/${sessionId}`);
    expect((await p.request(d.recordingUrl!, { key })).headers.get('content-type')).toBe('audio/wav');
  });

  it('short-lived token auth from POST /v1/sessions/direct; bad credentials and bad frames close cleanly', async () => {
    const r = await p.request('/v1/sessions/direct', { method: 'POST', key, json: { agentId } });
    expect(r.status).toBe(200);
    const t = (await r.json()) as { token: string; url: string; sessionId: string };
    expect(t.url).toContain(`/v1/agents/${agentId}/session?token=`);
    const ok = new DirectClient(wsUrl(p.url, `/v1/agents/${agentId}/session?token=${t.token}`));
    await waitUntil(() => ok.events.some((e) => e.type === 'session.started'));
    expect(ok.events[0]).toMatchObject({ sessionId: t.sessionId });
    ok.ws.send(Buffer.from([1, 2, 3]), { binary: true }); // odd length: not PCM16
    await ok.closed;
    expect(ok.closeCode).toBe(1007);
    expect(ok.events.some((e) => e.type === 'error' && e.code === 'invalid_audio')).toBe(true);

    const bad = new DirectClient(wsUrl(p.url, `/v1/agents/${agentId}/session?token=v1.x.y`));
    await bad.closed;
    expect(bad.closeCode).toBe(1008);
    expect(bad.events).toEqual([expect.objectContaining({ type: 'error', code: 'invalid_session_token' })]);
    const nokey = new DirectClient(wsUrl(p.url, `/v1/agents/${agentId}/session`));
    await nokey.closed;
    expect(nokey.closeCode).toBe(1008);
    const other = new DirectClient(wsUrl(p.url, `/v1/agents/agt_missing/session`), { authorization: `Bearer ${key}` });
    await other.closed;
    expect(other.closeCode).toBe(1011);
    expect(other.events.at(-1)).toMatchObject({ type: 'error', code: 'not_found' });
    const junk = new DirectClient(wsUrl(p.url, `/v1/agents/${agentId}/session`), { authorization: `Bearer ${key}` });
    await waitUntil(() => junk.events.some((e) => e.type === 'session.started'));
    junk.ws.send('{"type":"nope"}');
    await junk.closed;
    expect(junk.closeCode).toBe(1007);
    expect((await fetch(`${p.url}/healthz`)).status).toBe(200);
  });

  it('serves the browser page', async () => {
    const r = await fetch(`${p.url}/realtime/`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/html');
    expect(await r.text()).toContain('/v1/sessions/direct');
  });
});
