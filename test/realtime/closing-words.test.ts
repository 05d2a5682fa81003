import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startDeepgramLiveDouble,
  type DeepgramLiveDouble,
} from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { tokenFromTwiml, voicePlatformEnv, wsUrl } from '../../support/realtime/helpers.ts';

/**
 * Closing words are never cut (issue #33): a cap reached while the agent speaks ends the call only once that
 * utterance has played — then the goodbye, then the hang-up — over the real Twilio media path; and a duration cap
 * below one connected minute plus one reply is refused where it is set.
 */
const LONG_GREETING =
  'Hello and thank you for calling the Riverside dental clinic. We are open from nine in the morning until five ' +
  'in the afternoon on weekdays, and until one on Saturdays. Please tell me how I can help you today.';

describe('a cap reached mid-utterance', () => {
  let p: TestPlatform;
  let dg: DeepgramLiveDouble;
  let llm: OpenAiChatDouble;
  beforeAll(async () => {
    dg = await startDeepgramLiveDouble({ script: () => '' });
    llm = await startOpenAiChatDouble(() => ({ text: 'Sure.' }), { key: 'sk-test-closing' });
    // A 10 s cap, so the test need not wait out the production minimum.
    p = await startTestPlatform({ env: { ...voicePlatformEnv(dg, llm), REALTIME_MIN_CALL_SECONDS: '10' } });
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    await dg?.close();
    await llm?.close();
  });

  it('lets the greeting play whole, then says the goodbye and ends max-duration', async () => {
    const { apiKey: key } = await p.developer('pro');
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: { name: 'Clinic', llmProvider: 'local', llmModel: 'knowledge-lookup', firstMessage: LONG_GREETING },
    });
    const { id } = (await a.json()) as { id: string };
    const res = await p.request('/v1/sessions/twilio', {
      method: 'POST',
      key,
      json: { agentId: id, from: '+15550001111', to: '+15550002222', maxDurationSeconds: 10 },
    });
    expect(res.status).toBe(200);
    const { twiml, sessionId } = (await res.json()) as { twiml: string; sessionId: string };
    const caller = new TwilioCaller({ url: wsUrl(p.url, '/v1/sessions/twilio/stream'), token: tokenFromTwiml(twiml) });
    await caller.start();
    const ended = async () =>
      (
        await p.infra.db.query<{ end_reason: string | null }>('select end_reason from rt_sessions where id = $1', [
          sessionId,
        ])
      ).rows[0]?.end_reason;
    await waitUntil(async () => Boolean(await ended()), 60_000);
    caller.stop();
    expect(await ended()).toBe('max-duration');
    const { rows } = await p.infra.db.query<{ text: string; interrupted: boolean; end_ms: number }>(
      `select text, interrupted, end_ms from rt_turns where session_id = $1 and speaker = 'assistant' order by idx`,
      [sessionId],
    );
    // The greeting (longer than the 10 s cap) was heard out, not cut; the goodbye came after it.
    expect(rows.map((r) => [r.text, r.interrupted])).toEqual([
      [LONG_GREETING, false],
      ["I'm sorry, I have to end the call here. Goodbye.", false],
    ]);
    expect(rows[0]!.end_ms).toBeGreaterThan(10_000);
  }, 90_000);
});

describe('duration caps below one minute and a reply', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ roles: ['api'] });
  }, 60_000);
  afterAll(() => p?.close());

  it('are refused on the agent and the session; the minimum is accepted', async () => {
    const { apiKey: key } = await p.developer('pro');
    const short = await p.request('/v1/agents', { method: 'POST', key, json: { name: 'x', maxDurationSeconds: 45 } });
    expect(short.status).toBe(400);
    expect(JSON.stringify(await short.json())).toMatch(/maxDurationSeconds must be at least 90/);
    const ok = await p.request('/v1/agents', { method: 'POST', key, json: { name: 'x', maxDurationSeconds: 90 } });
    expect(ok.status).toBe(201);
    const { id } = (await ok.json()) as { id: string };
    const put = await p.request(`/v1/agents/${id}`, { method: 'PUT', key, json: { maxDurationSeconds: 30 } });
    expect(put.status).toBe(400);
    for (const path of ['/v1/sessions/direct', '/v1/sessions/twilio']) {
      const r = await p.request(path, {
        method: 'POST',
        key,
        json: { agentId: id, from: '+15550001111', to: '+15550002222', maxDurationSeconds: 30 },
      });
      expect(r.status, path).toBe(400);
      expect(((await r.json()) as { error: { param: string } }).error.param).toBe('maxDurationSeconds');
    }
  });
});
