import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import {
  startDeepgramLiveDouble,
  type DeepgramLiveDouble,
} from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { isReplyEndMark } from '../../shared/contracts/reply-end-mark.ts';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { fliteUtterance, tokenFromTwiml, voicePlatformEnv, wsUrl } from '../../support/realtime/helpers.ts';

/**
 * Preemptive replies and adaptive endpointing on a real session (Deepgram live and OpenAI chat doubles): whatever
 * was prepared and dropped on the way, the caller hears only the reply to what they said, after they said it, and
 * the history and trace hold only that reply.
 */
let p: TestPlatform;
let dg: DeepgramLiveDouble;
let llm: OpenAiChatDouble;
let key: string;
let agentId: string;
const lines: string[] = [];

const REPLY = (text: string) => `You said ${text.replace(/[^\w ]/g, '').split(' ').length} words, noted.`;

beforeAll(async () => {
  dg = await startDeepgramLiveDouble({ script: (_c, u) => lines[u] ?? 'Hello there.' });
  llm = await startOpenAiChatDouble((body) => {
    const last = (body.messages as Array<{ content: string }>).at(-1)?.content ?? '';
    return { text: REPLY(last) };
  });
  p = await startTestPlatform({
    env: voicePlatformEnv(dg, llm),
  });
  ({ apiKey: key } = await p.developer('pro'));
}, 120_000);

afterAll(async () => {
  await p?.close();
  await dg?.close();
  await llm?.close();
});

describe('agents: turnTaking', () => {
  it('is stored, returned and validated with the error envelope', async () => {
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: {
        name: 'Front desk',
        systemPrompt: 'You answer the phone.',
        firstMessage: 'Hello, how can I help?',
        llmModel: 'gpt-4o-mini',
        turnTaking: { endpointingMs: 300, completeMs: 200, incompleteMs: 900, preemptive: true },
      },
    });
    expect(a.status).toBe(201);
    const agent = (await a.json()) as { id: string; turnTaking: unknown };
    agentId = agent.id;
    expect(agent.turnTaking).toEqual({ endpointingMs: 300, completeMs: 200, incompleteMs: 900, preemptive: true });
    const got = (await (await p.request(`/v1/agents/${agentId}`, { key })).json()) as { turnTaking: unknown };
    expect(got.turnTaking).toEqual(agent.turnTaking);

    const bad = await p.request(`/v1/agents/${agentId}`, {
      method: 'PUT',
      key,
      json: { turnTaking: { endpointingMs: 300, completeMs: 600 } },
    });
    expect(bad.status).toBe(400);
    const err = (await bad.json()) as { error: { type: string; param: string; message: string } };
    expect(err.error.type).toBe('invalid_request_error');
    expect(err.error.param).toContain('turnTaking');
    const cleared = await p.request(`/v1/agents/${agentId}`, { method: 'PUT', key, json: { turnTaking: null } });
    expect(await cleared.json()).not.toHaveProperty('turnTaking');
    await p.request(`/v1/agents/${agentId}`, {
      method: 'PUT',
      key,
      json: { turnTaking: { endpointingMs: 300, completeMs: 200, incompleteMs: 900 } },
    });
  });
});

describe('a caller who pauses mid-sentence, then asks a question', () => {
  it('is not cut off; hears only replies to what they said; dropped replies leave no trace', async () => {
    const PAUSED = 'Do you have anything on | Tuesday morning?';
    const QUESTION = 'And what does it cost?';
    lines.push(PAUSED, QUESTION);
    const res = await p.request('/v1/sessions/twilio', {
      method: 'POST',
      key,
      json: { agentId, from: '+15550001111', to: '+15550002222' },
    });
    const { twiml, sessionId } = (await res.json()) as { twiml: string; sessionId: string };
    const c = new TwilioCaller({ url: wsUrl(p.url, '/v1/sessions/twilio/stream'), token: tokenFromTwiml(twiml) });
    await c.start();
    // Sentences' marks: each reply also ends with an end mark (`<turn>:end`), which these counts leave out.
    const sentenceMarks = () => c.marksEchoed.filter((m) => !isReplyEndMark(m)).length;
    const quiet = () => sentenceMarks() > 0 && !c.playing;
    await c.until(quiet, 20_000);
    const requestsBefore = llm.requests.length;

    // "Do you have anything on" … 450 ms … "Tuesday morning?": the pause ends on "on", so the window is long.
    const [a, b] = await Promise.all(PAUSED.split(' | ').map((t) => fliteUtterance(t)));
    const n = c.media.length;
    const end = await c.say(Buffer.concat([a!, Buffer.alloc(2 * 8 * 450), b!]));
    const cutIn = c.media.slice(n).some((m) => m.at < end);
    expect(cutIn).toBe(false);
    await c.until(() => c.media.length > n, 20_000);
    await c.until(() => quiet() && sentenceMarks() >= 2, 20_000);

    const m = c.media.length;
    const end2 = await c.say(await fliteUtterance(QUESTION));
    expect(c.media.slice(m).some((x) => x.at < end2)).toBe(false);
    await c.until(() => c.media.length > m, 20_000);
    await c.until(() => quiet() && sentenceMarks() >= 3, 20_000);
    c.stop();
    await c.closed;

    const full = 'Do you have anything on Tuesday morning?';
    const d = await waitUntil(async () => {
      const r = await p.request(`/v1/observability/sessions/${sessionId}`, { key });
      const body = (await r.json()) as { status: string; turns: Array<{ speaker: string; text: string }> };
      return body.status === 'completed' ? body : null;
    });
    expect(d.turns.map((t) => [t.speaker, t.text])).toEqual([
      ['assistant', 'Hello, how can I help?'],
      ['user', full],
      ['assistant', REPLY(full)],
      ['user', QUESTION],
      ['assistant', REPLY(QUESTION)],
    ]);

    // Every LLM request of the call either made a reply that played or was a prepared reply that was dropped.
    const reqs = llm.requests
      .slice(requestsBefore)
      .map((r) => r.json as { messages: Array<{ role: string; content: string }> });
    const { rows } = await p.infra.db.query<{ metrics: Record<string, number> }>(
      'select metrics from rt_sessions where id = $1',
      [sessionId],
    );
    const metrics = rows[0]!.metrics;
    expect(reqs.length).toBe(2 + metrics.preparedRepliesDropped!);
    expect(metrics.preparedReplies).toBeLessThanOrEqual(2);
    // The second reply's history holds the first exchange as heard, and nothing of a dropped reply.
    const last = reqs.at(-1)!.messages.filter((x) => x.role !== 'system');
    expect(last.map((x) => [x.role, x.content])).toEqual([
      ['assistant', 'Hello, how can I help?'],
      ['user', full],
      ['assistant', REPLY(full)],
      ['user', QUESTION],
    ]);
  }, 60_000);
});
