import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startDeepgramLiveDouble,
  type DeepgramLiveDouble,
} from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { MESSAGE_ASKS } from '../../shared/engines/llm/local-message.ts';
import { analyzeCall } from '../../shared/domains/realtime/analysis/analyze-call.ts';
import { extractFacts } from '../../shared/domains/realtime/analysis/rules.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { startWebhookReceiver } from '../../support/helpers/webhook-receiver.ts';
import { voicePlatformEnv } from '../../support/realtime/helpers.ts';
import { inboundCallSaying } from '../../support/realtime/inbound-call.ts';

/**
 * The outcome of a call in words and data (issue #33). Post-call analysis: an agent's `analysis` runs after the call — on its LLM (the OpenAI double here),
 * metered as `call.analyze`, or on the local reply engine as a rule-based extractor labelled as such — is stored
 * on the session, returned by the session API and sent once, signed, as `call.analyzed`. The built-in
 * `take_message` tool (callTools.takeMessage): the local engine asks for each missing field in turn, a vendor LLM
 * calls the tool; the message is stored on the call and sent in `call.analyzed`. Calls go over the real Twilio media
 * path (the scripted Twilio caller, Deepgram's double for the phone STT).
 */
let p: TestPlatform;
let dg: DeepgramLiveDouble;
let llm: OpenAiChatDouble;
let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
let key: string;
/** What the caller says, one line per utterance (the Deepgram double answers each with its line). */
let lines: string[] = [];
const ANALYSIS_JSON = {
  summary: 'Dana Smith called to move her cleaning to Friday; the agent agreed.',
  structuredData: { callerName: 'Dana Smith', appointmentDay: 'Friday' },
  success: { success: true, reason: 'The appointment was moved.' },
};
const SAM = { callerName: 'Sam Lee', message: 'Please reschedule my visit.', urgency: 'low' };
const SCHEMA = {
  type: 'object',
  properties: { callerName: { type: 'string' }, appointmentDay: { type: 'string' } },
  required: ['callerName'],
};

beforeAll(async () => {
  hooks = await startWebhookReceiver();
  dg = await startDeepgramLiveDouble({ script: (_c, u) => lines[u] ?? '' });
  llm = await startOpenAiChatDouble(
    (body) => {
      const msgs = body.messages as { role: string; content: string }[];
      const last = msgs.at(-1)!;
      if (msgs[0]?.content.startsWith('You analyse a finished phone call'))
        return { text: `Here it is:\n${JSON.stringify(ANALYSIS_JSON)}`, usage: { input: 300, output: 60 } };
      if (last.role === 'tool') return { text: 'Thanks, I will pass that on.' };
      if (/leave a message/i.test(last.content)) return { toolCalls: [{ name: 'take_message', arguments: SAM }] };
      return { text: 'Sure, I can help with that.' };
    },
    { key: 'sk-test-analysis', tokensPerSecond: 1000 },
  );
  p = await startTestPlatform({ env: voicePlatformEnv(dg, llm) });
  ({ apiKey: key } = await p.developer('pro'));
}, 120_000);

afterAll(async () => {
  await p?.close();
  await dg?.close();
  await llm?.close();
  await hooks?.close();
});

async function agent(json: Record<string, unknown>) {
  return p.request('/v1/agents', {
    method: 'POST',
    key,
    json: { name: 'Clinic', llmModel: 'gpt-4o-mini', firstMessage: 'Hello, this is the clinic.', ...json },
  });
}

async function call(agentId: string, says: string | string[]): Promise<string> {
  lines = typeof says === 'string' ? [says] : says;
  return inboundCallSaying(p, { key, agentId, says: lines, webhookUrl: hooks.url });
}

async function agentId(json: Record<string, unknown>): Promise<string> {
  const r = await agent(json);
  expect(r.status).toBe(201);
  return ((await r.json()) as { id: string }).id;
}

const analyzed = (sessionId: string) =>
  hooks.received.filter((h) => h.type === 'call.analyzed' && h.data.sessionId === sessionId);

async function detail(sessionId: string) {
  const r = await p.request(`/v1/observability/sessions/${sessionId}`, { key });
  expect(r.status).toBe(200);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies read field by field in asserts
  return (await r.json()) as Record<string, any>;
}

describe('analysis settings on the agent', () => {
  it('are stored and read back, absent when not set; a schema that does not compile or nests too deep is a 400', async () => {
    const analysis = { summary: true, structuredData: { schema: SCHEMA }, successCriteria: 'The appointment moved.' };
    const ok = await agent({ analysis });
    expect(ok.status).toBe(201);
    expect(await ok.json()).toMatchObject({ analysis });
    const plain = await agent({});
    expect(Object.keys((await plain.json()) as object)).not.toContain('analysis');
    const broken = await agent({
      analysis: { structuredData: { schema: { type: 'object', properties: { a: { type: 'nope' } } } } },
    });
    expect(broken.status).toBe(400);
    expect(JSON.stringify(await broken.json())).toContain('analysis.structuredData.schema');
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 8; i++) deep = { type: 'object', properties: { x: deep } };
    expect((await agent({ analysis: { structuredData: { schema: deep } } })).status).toBe(400);
    expect((await agent({ analysis: { successCriteria: 'x'.repeat(2001) } })).status).toBe(400);
  });

  it("keep a schema's properties in the order written, also in the agent's versions", async () => {
    // jsonb sorts keys shorter-first: "reasoning" came back after "ok", though the model fills them in order.
    const schema = { type: 'object', properties: { reasoning: { type: 'string' }, ok: { type: 'boolean' } } };
    const id = await agentId({ analysis: { structuredData: { schema } } });
    const order = (a: { analysis: { structuredData: { schema: { properties: object } } } }) =>
      Object.keys(a.analysis.structuredData.schema.properties);
    const read = await p.request(`/v1/agents/${id}`, { key });
    expect(order((await read.json()) as never)).toEqual(['reasoning', 'ok']);

    const edited = { type: 'object', properties: { why: { type: 'string' }, answer: { type: 'string' } } };
    const put = await p.request(`/v1/agents/${id}`, {
      method: 'PUT',
      key,
      json: { analysis: { structuredData: { schema: edited } } },
    });
    expect(put.status).toBe(200);
    expect(order((await put.json()) as never)).toEqual(['why', 'answer']);
    const v1 = await p.request(`/v1/agents/${id}/versions/1`, { key });
    expect(order(((await v1.json()) as { config: never }).config)).toEqual(['reasoning', 'ok']);
    const v2 = await p.request(`/v1/agents/${id}/versions/2`, { key });
    expect(order(((await v2.json()) as { config: never }).config)).toEqual(['why', 'answer']);
  });
});

describe('after a call', () => {
  it("on the agent's LLM: summary, schema data and a success verdict, metered, stored, sent once signed", async () => {
    const created = await agent({
      analysis: { summary: true, structuredData: { schema: SCHEMA }, successCriteria: 'The appointment moved.' },
    });
    const { id } = (await created.json()) as { id: string };
    const sessionId = await call(id, 'Hi, my name is Dana Smith, can I move my cleaning to Friday?');
    await waitUntil(() => analyzed(sessionId).length > 0, 30_000);
    const [hook] = analyzed(sessionId);
    expect(hook!.signed).toBe(true);
    expect(hook!.data).toMatchObject({
      sessionId,
      agentId: id,
      endReason: 'caller-hangup',
      analysis: {
        status: 'completed',
        engine: { kind: 'llm', provider: 'openai', model: 'gpt-4o-mini' },
        summary: ANALYSIS_JSON.summary,
        structuredData: ANALYSIS_JSON.structuredData,
        success: ANALYSIS_JSON.success,
      },
    });
    // The model read the call's transcript.
    const asked = llm.requests.find((r) => JSON.stringify(r.json).includes('You analyse a finished phone call'))!
      .json as { messages: { content: string }[] };
    expect(asked.messages[1]!.content).toContain('Caller: Hi, my name is Dana Smith');
    expect(asked.messages[1]!.content).toContain('Agent: Hello, this is the clinic.');
    expect((await detail(sessionId)).analysis).toEqual(hook!.data.analysis);
    // Metered on the call's own request id, labelled.
    const ledger = await p.infra.db.query<{ units: string; status: string }>(
      `select units::int as units, status from credit_ledger where request_id = $1 and operation = 'call.analyze'`,
      [sessionId],
    );
    expect(ledger.rows).toEqual([{ units: 360, status: 'committed' }]);
    // Run again (a retried or repeated job): the stored analysis stands, nothing is charged or sent twice.
    const again = await analyzeCall(p.infra, sessionId, {
      signal: new AbortController().signal,
      log: p.infra.log,
      final: true,
    });
    expect(again).toEqual(hook!.data.analysis);
    const messages = await p.infra.db.query(
      `select id from webhook_messages where event_type = 'call.analyzed' and source = $1`,
      [`call:${sessionId}:analyzed`],
    );
    expect(messages.rows).toHaveLength(1);
    const ledgerAgain = await p.infra.db.query(
      `select id from credit_ledger where request_id = $1 and operation = 'call.analyze'`,
      [sessionId],
    );
    expect(ledgerAgain.rows).toHaveLength(1);
    expect(analyzed(sessionId)).toHaveLength(1);
  });

  it('on the local reply engine: the rule-based extractor, labelled, finds number, name, time and callback', async () => {
    const created = await agent({
      llmProvider: 'local',
      llmModel: 'knowledge-lookup',
      analysis: { summary: true },
    });
    const { id } = (await created.json()) as { id: string };
    const sessionId = await call(
      id,
      'Hi, my name is Dana Smith. Please call me back at 555 123 4567 tomorrow at 3 pm.',
    );
    await waitUntil(() => analyzed(sessionId).length > 0, 30_000);
    const analysis = analyzed(sessionId)[0]!.data.analysis as Record<string, unknown>;
    expect(analysis).toMatchObject({
      status: 'completed',
      engine: { kind: 'rules', provider: 'local' },
      extracted: {
        phoneNumbers: ['5551234567'],
        names: ['Dana Smith'],
        dateTimes: ['tomorrow', '3 pm'],
        callbackRequested: true,
      },
      notAvailable: ['summary'],
    });
    expect(String((analysis.engine as { label: string }).label)).toMatch(/rule-based.*not a language model/i);
    expect(analysis).not.toHaveProperty('summary');
    const ledger = await p.infra.db.query(
      `select id from credit_ledger where request_id = $1 and operation = 'call.analyze'`,
      [sessionId],
    );
    expect(ledger.rows).toHaveLength(0);
  });

  it('no analysis asked and no message taken: nothing is sent', async () => {
    const { id } = (await (await agent({})).json()) as { id: string };
    const sessionId = await call(id, 'Hello?');
    await waitUntil(async () => (await detail(sessionId)).endReason !== undefined);
    expect(
      await analyzeCall(p.infra, sessionId, { signal: new AbortController().signal, log: p.infra.log, final: true }),
    ).toBeNull();
    expect(analyzed(sessionId)).toHaveLength(0);
    expect((await detail(sessionId)).analysis).toBeUndefined();
  });
});

describe('take_message', () => {
  it('on the local engine: asks for each missing field in turn, then takes the message', async () => {
    const id = await agentId({ llmProvider: 'local', llmModel: 'knowledge-lookup', callTools: { takeMessage: true } });
    const sessionId = await call(id, [
      'Hi, can I leave a message for Doctor Lee?',
      'My crown came loose and I need to see her.',
      'My name is Dana Smith.',
      'Five five five, one two three, four five six seven.',
      'Yes, it is urgent.',
    ]);
    const d = await detail(sessionId);
    const said = d.turns
      .filter((t: { speaker: string }) => t.speaker === 'assistant')
      .map((t: { text: string }) => t.text);
    expect(said).toEqual([
      'Hello, this is the clinic.',
      MESSAGE_ASKS.message,
      MESSAGE_ASKS.callerName,
      MESSAGE_ASKS.callbackNumber,
      MESSAGE_ASKS.urgency,
      'Thank you, Dana Smith. I have taken your message and it will be passed on.',
    ]);
    const message = {
      callerName: 'Dana Smith',
      callbackNumber: '5551234567',
      message: 'My crown came loose and I need to see her.',
      urgency: 'high',
    };
    expect(d.takenMessage).toEqual(message);
    expect(d.toolExecutions).toContainEqual(expect.objectContaining({ name: 'take_message', ok: true }));
    await waitUntil(() => analyzed(sessionId).length > 0, 30_000);
    expect(analyzed(sessionId)).toHaveLength(1);
    expect(analyzed(sessionId)[0]!.data.analysis).toMatchObject({ status: 'completed', message });
  });

  it('on a vendor LLM: the model is offered the tool and its call is stored', async () => {
    const id = await agentId({ callTools: { takeMessage: true } });
    const sessionId = await call(id, ['I want to leave a message please.']);
    const offered = llm.requests.at(-1)!.json as { tools: { function: { name: string; parameters: object } }[] };
    expect(offered.tools.map((t) => t.function.name)).toContain('take_message');
    await waitUntil(async () => (await detail(sessionId)).takenMessage !== undefined);
    const message = SAM;
    expect((await detail(sessionId)).takenMessage).toEqual(message);
    await waitUntil(() => analyzed(sessionId).length > 0, 30_000);
    expect(analyzed(sessionId)[0]!.data.analysis).toMatchObject({ message });
    // No analysis was asked of an engine (only a message was taken): the call reads back with it, no engine named.
    const stored = (await detail(sessionId)).analysis;
    expect(stored).toMatchObject({ status: 'completed', message });
    expect(stored.engine).toBeUndefined();
  });

  it('is a reserved name: a custom tool may not take it', async () => {
    const r = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: {
        name: 'x',
        tools: [{ name: 'take_message', description: 'mine', url: 'https://example.com/t' }],
      },
    });
    expect(r.status).toBe(400);
  });
});

describe('the rule-based extractor', () => {
  it('reads numbers said as words, names only after an introduction, and dates', () => {
    expect(
      extractFacts([
        "I'm fine thanks. This is Maria from accounting.",
        'My number is five five five, two one two, nine eight seven six. Next Tuesday morning or March 3rd works.',
        'My name is jo. Call at 3 p.m.',
      ]),
    ).toEqual({
      phoneNumbers: ['5552129876'],
      names: ['Maria', 'Jo'],
      dateTimes: ['Next Tuesday morning', 'March 3rd', '3 p.m.'],
      callbackRequested: false,
    });
  });
});
