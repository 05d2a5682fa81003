import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startDeepgramLiveDouble,
  type DeepgramLiveDouble,
} from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { startTwilioRestDouble, type TwilioRestDouble } from '../../support/doubles/twilio-rest.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { isReplyEndMark } from '../../shared/contracts/reply-end-mark.ts';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { fliteUtterance, rms, tokenFromTwiml, voicePlatformEnv, wsUrl } from '../../support/realtime/helpers.ts';
import { FAST_LINE } from '../../support/realtime/fast-line.ts';

/**
 * Phone-ready agents against the Twilio REST double and the real media-stream path: answering-machine detection
 * (the platform's detector on the caller's audio, and Twilio's async AMD callback), voicemail messages, hang-up,
 * cold and warm transfers and end_call.
 */
const SID = 'ACphone00000000000000000000000000';
const TOKEN = 'twilio-auth-token-phone';
const PUBLIC = 'https://voice.example.com';
const GREETING = 'Hello, this is the clinic calling.';

let p: TestPlatform;
let rest: TwilioRestDouble;
let dg: DeepgramLiveDouble;
let llm: OpenAiChatDouble;
let key: string;
const agents: Record<string, string> = {};
/** What the current test's caller says (tests run one at a time; the Deepgram double answers with it). */
let words = 'Hello there.';

async function agent(json: Record<string, unknown>): Promise<string> {
  const r = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: { llmModel: 'gpt-4o-mini', firstMessage: GREETING, ...json },
  });
  expect(r.status).toBe(201);
  return ((await r.json()) as { id: string }).id;
}

beforeAll(async () => {
  rest = await startTwilioRestDouble({ accountSid: SID, authToken: TOKEN });
  dg = await startDeepgramLiveDouble({ script: () => words });
  llm = await startOpenAiChatDouble(
    (body) => {
      const msgs = body.messages as Array<{
        role: string;
        content: string;
        tool_calls?: { function: { name: string } }[];
      }>;
      const last = msgs.at(-1)!;
      if (last.role === 'tool') {
        const name = msgs.findLast((m) => m.tool_calls)?.tool_calls?.[0]?.function.name;
        return { text: name === 'end_call' ? 'Goodbye, have a nice day!' : 'I am transferring you now.' };
      }
      const text = last.content ?? '';
      if (/billing/i.test(text))
        return {
          toolCalls: [
            { name: 'transfer_call', arguments: { target: 'billing', summary: 'Dana disputes an invoice.' } },
          ],
        };
      if (/person/i.test(text))
        return {
          toolCalls: [{ name: 'transfer_call', arguments: { target: 'sales', summary: 'Dana wants a quote.' } }],
        };
      if (/bye/i.test(text)) return { toolCalls: [{ name: 'end_call', arguments: { reason: 'caller said goodbye' } }] };
      return { text: 'Sure, I can help with that.' };
    },
    { key: 'sk-test-phone', tokensPerSecond: 1000 },
  );
  p = await startTestPlatform({
    env: {
      ...voicePlatformEnv(dg, llm),
      PUBLIC_BASE_URL: PUBLIC,
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TOKEN,
      TWILIO_API_BASE_URL: rest.url,
      TWILIO_MACHINE_DETECTION: 'DetectMessageEnd',
    },
  });
  ({ apiKey: key } = await p.developer('pro'));
  agents.message = await agent({
    name: 'Reminder',
    voicemail: { action: 'leave_message', message: 'Hi {{name}}, this is the clinic. Please call us back.' },
  });
  agents.hangup = await agent({ name: 'Dialler', voicemail: { action: 'hangup' } });
  agents.desk = await agent({
    name: 'Front desk',
    callTools: {
      endCall: true,
      transferTargets: [
        { name: 'sales', to: '+15550009999', description: 'quotes and orders' },
        { name: 'billing', to: 'sip:billing@pbx.example.com', mode: 'warm' },
      ],
    },
  });
}, 120_000);

afterAll(async () => {
  await p?.close();
  await rest?.close();
  await dg?.close();
  await llm?.close();
});

function signedPost(path: string, params: Record<string, string>, signature?: string) {
  return fetch(p.url + path, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': signature ?? twilio.getExpectedTwilioSignature(TOKEN, PUBLIC + path, params),
    },
    body: new URLSearchParams(params),
  });
}

/**
 * Places an outbound call through the dispatcher and answers it as Twilio does: connect callback, then the stream.
 * `rate`: the line's media clock (support/realtime/fast-line.ts); fast where Twilio's AMD answers (no detector on
 * the audio) and for a person's "Hello?" (its final may come after the decision: it is not a turn). Where the
 * detector hears a machine, real time: it decides by the audio while the answer's writes come in wall time, and a
 * fast line brings them closer than a real one does (the decision's write, without the beep, can land after the
 * beep's).
 */
async function outboundCall(agentId: string, says: string[], variables?: Record<string, string>, rate = 1) {
  words = says[0] ?? 'Hello there.';
  const res = await p.request('/v1/sessions/twilio/outbound', {
    method: 'POST',
    key,
    json: {
      agentId,
      from: '+15550001111',
      to: '+15550003333',
      variables,
      webhookUrl: 'https://hooks.example.com/calls',
    },
  });
  expect(res.status).toBe(202);
  const { taskId } = (await res.json()) as { taskId: string };
  const index = rest.calls.length;
  await waitUntil(() => rest.calls.length > index);
  const callSid = `CA${String(index + 1).padStart(32, '0')}`;
  const connect = await signedPost(`/v1/sessions/twilio/task/${taskId}/connect`, {
    AccountSid: SID,
    CallSid: callSid,
    CallStatus: 'in-progress',
  });
  expect(connect.status).toBe(200);
  const twiml = await connect.text();
  const sessionId = /name="sessionId" value="(ses_\w+)"/.exec(twiml)![1]!;
  const caller = new TwilioCaller({
    url: wsUrl(p.url, '/v1/sessions/twilio/stream'),
    token: tokenFromTwiml(twiml),
    callSid,
    rate,
  });
  // Twilio ends the media stream when the call is hung up or given new TwiML.
  await caller.start();
  return { caller, sessionId, taskId, index, callSid };
}

async function inboundCall(agentId: string, says: string[]) {
  words = says[0] ?? 'Hello there.';
  const res = await p.request('/v1/sessions/twilio', {
    method: 'POST',
    key,
    json: { agentId, from: '+15550001111', to: '+15550002222' },
  });
  const body = (await res.json()) as { twiml: string; sessionId: string };
  const caller = new TwilioCaller({
    url: wsUrl(p.url, '/v1/sessions/twilio/stream'),
    token: tokenFromTwiml(body.twiml),
    rate: FAST_LINE,
  });
  await caller.start();
  return { caller, sessionId: body.sessionId };
}

/** Ends the caller's stream when the REST double updates its call, as Twilio does. */
function twilioEndsStreamOnUpdate(caller: TwilioCaller): void {
  rest.onUpdate = (u) => {
    if (u.callSid === caller.call) caller.stop();
  };
}

async function session(id: string) {
  const { rows } = await p.infra.db.query(
    'select status, end_reason, answered_by, amd_source, beep_at_ms, transfer from rt_sessions where id = $1',
    [id],
  );
  return rows[0] as {
    status: string;
    end_reason: string;
    answered_by: string | null;
    amd_source: string | null;
    beep_at_ms: number | null;
    transfer: Record<string, unknown> | null;
  };
}

async function detail(sessionId: string) {
  const r = await p.request(`/v1/observability/sessions/${sessionId}`, { key });
  expect(r.status).toBe(200);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies read field by field in asserts
  return (await r.json()) as Record<string, any>;
}

function tone(hz: number, ms: number): Buffer {
  const n = (8000 * ms) / 1000;
  const b = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(9000 * Math.sin((2 * Math.PI * hz * i) / 8000)), i * 2);
  return b;
}
const silence = (ms: number) => Buffer.alloc(((8000 * ms) / 1000) * 2);

const updatesFor = (callSid: string) => rest.updates.filter((u) => u.callSid === callSid);

describe('outbound calls: answering-machine detection', () => {
  it('asks Twilio for async AMD with a signed callback; a bad signature is refused', async () => {
    const { caller, taskId, index, callSid } = await outboundCall(agents.hangup!, [], undefined, FAST_LINE);
    const form = rest.calls[index]!;
    expect(form.get('MachineDetection')).toBe('DetectMessageEnd');
    expect(form.get('AsyncAmd')).toBe('true');
    expect(form.get('AsyncAmdStatusCallback')).toBe(`${PUBLIC}/v1/sessions/twilio/task/${taskId}/amd`);
    const forged = await signedPost(
      `/v1/sessions/twilio/task/${taskId}/amd`,
      { CallSid: callSid, AnsweredBy: 'human' },
      'Zm9yZ2Vk',
    );
    expect(forged.status).toBe(401);
    caller.stop();
    await caller.closed;
  });

  it('a voicemail greeting with a beep: no first message, the filled-in message after the beep, then hang-up', async () => {
    const greeting = await fliteUtterance(
      'Hi, you have reached Dana. I cannot take your call right now. Please leave a message after the tone.',
    );
    const { caller, sessionId, callSid } = await outboundCall(agents.message!, [], { name: 'Dana' });
    twilioEndsStreamOnUpdate(caller);
    const spoken = caller.say(Buffer.concat([greeting, silence(400)]));
    const speechEnd = await spoken;
    await caller.say(Buffer.concat([tone(1000, 500), silence(3000)]));
    await waitUntil(() => updatesFor(callSid).length > 0, 20_000);
    await caller.closed;
    // Nothing was played over the greeting; the message came after it, and only then the call was hung up.
    // More than a second of the message was sent (in pieces of up to a second: Twilio buffers them).
    expect(caller.media.reduce((n, m) => n + m.bytes, 0)).toBeGreaterThan(8000);
    for (const m of caller.media) expect(m.at).toBeGreaterThan(speechEnd);
    expect(rms(Buffer.concat(caller.heard))).toBeGreaterThan(300);
    expect(updatesFor(callSid)[0]!.form.get('Status')).toBe('completed');
    await waitUntil(async () => (await session(sessionId)).status === 'completed');
    const s = await session(sessionId);
    expect(s).toMatchObject({ end_reason: 'voicemail-left', answered_by: 'machine', amd_source: 'detector' });
    expect(s.beep_at_ms).toBeGreaterThan(0);
    const d = await detail(sessionId);
    expect(d).toMatchObject({ answeredBy: 'machine', endReason: 'voicemail-left', beepAtMs: s.beep_at_ms });
    const said = d.turns
      .filter((t: { speaker: string }) => t.speaker === 'assistant')
      .map((t: { text: string }) => t.text);
    expect(said).toEqual(['Hi Dana, this is the clinic. Please call us back.']);
    // The webhook names the decision once, for the call's webhook URL.
    const { rows } = await p.infra.db.query(
      `select body from webhook_messages where source = $1 and event_type = 'session.answered_by'`,
      [`session_answered_by:${sessionId}`],
    );
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0].body as string).data).toMatchObject({
      sessionId,
      answeredBy: 'machine',
      callId: callSid,
    });
  });

  it('a person who says "Hello?" hears the first message; the agent answers them', async () => {
    const { caller, sessionId, callSid } = await outboundCall(agents.message!, ['Hello?'], undefined, FAST_LINE);
    const speechEnd = await caller.say(await fliteUtterance('Hello?'));
    await caller.until(() => caller.marksEchoed.length > 0, 15_000);
    for (const m of caller.media) expect(m.at).toBeGreaterThan(speechEnd);
    caller.stop();
    await caller.closed;
    await waitUntil(async () => (await session(sessionId)).status === 'completed');
    expect(await session(sessionId)).toMatchObject({
      answered_by: 'human',
      amd_source: 'detector',
      end_reason: 'caller-hangup',
    });
    expect(updatesFor(callSid)).toHaveLength(0);
    expect((await detail(sessionId)).turns.find((t: { speaker: string }) => t.speaker === 'assistant').text).toBe(
      GREETING,
    );
  });

  it('a slow STT\'s final for "Hello?" comes after the answer: the greeting plays whole and answers it', async () => {
    // The detector decides a person 1 s after "Hello?"; this vendor's final comes 1.5 s after it. Before, the late
    // final was taken for a turn: it cut the greeting and the agent answered "Hello?".
    dg.setFinalAfterMs(1500);
    try {
      const before = llm.requests.length;
      const { caller, sessionId } = await outboundCall(agents.message!, ['Hello?']);
      await caller.say(await fliteUtterance('Hello?'));
      await caller.until(() => caller.marksEchoed.length > 0, 15_000);
      words = 'Can I move my appointment?';
      await caller.say(await fliteUtterance(words));
      // A sentence's mark past the greeting's first (each reply also ends with an end mark, left out here).
      const sentenceMarks = () => caller.marksEchoed.filter((m) => !isReplyEndMark(m)).length;
      await caller.until(() => llm.requests.length > before && sentenceMarks() > 1, 20_000);
      caller.stop();
      await caller.closed;
      await waitUntil(async () => (await session(sessionId)).status === 'completed');
      // The LLM is asked about the question only (a reply prepared on its words, then the turn's): "Hello?" was
      // answered by the greeting.
      const bodies = llm.requests.slice(before).map((r) => r.body);
      expect(bodies.filter((b) => b.includes('Hello?'))).toEqual([]);
      expect(bodies.at(-1)).toContain('Can I move my appointment?');
      const turns = (await detail(sessionId)).turns as { speaker: string; text: string; interrupted: boolean }[];
      expect(turns.filter((t) => t.speaker === 'user').map((t) => t.text)).toEqual([
        'Hello?',
        'Can I move my appointment?',
      ]);
      const replies = turns.filter((t) => t.speaker === 'assistant');
      expect(replies[0]).toMatchObject({ text: GREETING, interrupted: false });
      expect(replies).toHaveLength(2);
      expect(replies[1]!.text).toMatch(/^Sure,/);
    } finally {
      dg.setFinalAfterMs(150);
    }
  });

  it("Twilio's AMD callback decides first: voicemail action hangup ends the call at once", async () => {
    const { caller, sessionId, index, callSid } = await outboundCall(agents.hangup!, [], undefined, FAST_LINE);
    twilioEndsStreamOnUpdate(caller);
    const amd = await rest.sendAmd(index, 'machine_end_beep', p.url);
    expect(amd.status).toBe(204);
    await waitUntil(() => updatesFor(callSid).length > 0, 10_000);
    await caller.closed;
    await waitUntil(async () => (await session(sessionId)).status === 'completed');
    expect(await session(sessionId)).toMatchObject({
      answered_by: 'machine',
      amd_source: 'twilio',
      end_reason: 'voicemail-hung-up',
    });
    expect(updatesFor(callSid)[0]!.form.get('Status')).toBe('completed');
    expect(caller.media).toHaveLength(0);
  });

  it("Twilio's machine_end_beep (DetectMessageEnd) means the greeting is over: the message is left at once", async () => {
    const { caller, sessionId, index, callSid } = await outboundCall(agents.message!, [], { name: 'Lee' }, FAST_LINE);
    twilioEndsStreamOnUpdate(caller);
    expect((await rest.sendAmd(index, 'machine_end_beep', p.url)).status).toBe(204);
    await waitUntil(() => updatesFor(callSid).length > 0, 20_000);
    await caller.closed;
    expect(rms(Buffer.concat(caller.heard))).toBeGreaterThan(300);
    await waitUntil(async () => (await session(sessionId)).status === 'completed');
    expect(await session(sessionId)).toMatchObject({
      answered_by: 'machine',
      amd_source: 'twilio',
      end_reason: 'voicemail-left',
    });
    const d = await detail(sessionId);
    expect(d.turns.map((t: { text: string }) => t.text)).toEqual(['Hi Lee, this is the clinic. Please call us back.']);
  });
});

describe('transfer_call and end_call', () => {
  it('cold transfer: the live call is updated with <Dial><Number>, the session ends there, recorded in the trace', async () => {
    const { caller, sessionId } = await inboundCall(agents.desk!, ['I would like to talk to a person.']);
    twilioEndsStreamOnUpdate(caller);
    await caller.until(() => caller.marksEchoed.length > 0);
    await caller.say(await fliteUtterance('I would like to talk to a person.'));
    await waitUntil(() => updatesFor(caller.call).length > 0, 20_000);
    await caller.closed;
    const twiml = updatesFor(caller.call)[0]!.form.get('Twiml');
    expect(twiml).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Number>+15550009999</Number></Dial></Response>',
    );
    await waitUntil(async () => (await session(sessionId)).status === 'completed');
    const s = await session(sessionId);
    expect(s.end_reason).toBe('transferred');
    expect(s.transfer).toMatchObject({
      target: 'sales',
      to: '+15550009999',
      mode: 'cold',
      summary: 'Dana wants a quote.',
    });
    const d = await detail(sessionId);
    expect(d.transfer).toMatchObject({ target: 'sales', mode: 'cold' });
    // A reply prepared before the endpoint runs the tool too; only the one that was spoken acts: one update.
    expect(d.toolExecutions).toContainEqual(expect.objectContaining({ name: 'transfer_call', ok: true }));
    expect(updatesFor(caller.call)).toHaveLength(1);
    // The agent said it was transferring before the hand-off.
    expect(d.turns.map((t: { text: string }) => t.text)).toContain('I am transferring you now.');
  });

  it('warm transfer: <Sip url> plays a signed whisper with the summary to the person first', async () => {
    const { caller, sessionId } = await inboundCall(agents.desk!, ['Put me through to billing please.']);
    twilioEndsStreamOnUpdate(caller);
    await caller.until(() => caller.marksEchoed.length > 0);
    await caller.say(await fliteUtterance('Put me through to billing please.'));
    await waitUntil(() => updatesFor(caller.call).length > 0, 20_000);
    const twiml = updatesFor(caller.call)[0]!.form.get('Twiml')!;
    const whisperPath = `/v1/sessions/twilio/whisper/${sessionId}`;
    expect(twiml).toContain(`<Sip url="${PUBLIC}${whisperPath}" method="POST">sip:billing@pbx.example.com</Sip>`);
    const params = { AccountSid: SID, CallSid: 'CA99999999999999999999999999999999', CallStatus: 'in-progress' };
    const whisper = await signedPost(whisperPath, params);
    expect(whisper.status).toBe(200);
    expect(await whisper.text()).toContain(
      '<Say>Transferring a call from +15550001111. Dana disputes an invoice.</Say>',
    );
    expect((await signedPost(whisperPath, params, 'Zm9yZ2Vk')).status).toBe(401);
    await caller.closed;
    await waitUntil(async () => (await session(sessionId)).status === 'completed');
    expect(await session(sessionId)).toMatchObject({ end_reason: 'transferred' });
  });

  it('end_call: the goodbye is spoken, then the call is hung up', async () => {
    const { caller, sessionId } = await inboundCall(agents.desk!, ['Thanks, bye.']);
    twilioEndsStreamOnUpdate(caller);
    await caller.until(() => caller.marksEchoed.length > 0);
    await caller.say(await fliteUtterance('Thanks, bye.'));
    await waitUntil(() => updatesFor(caller.call).length > 0, 20_000);
    await caller.closed;
    expect(updatesFor(caller.call)[0]!.form.get('Status')).toBe('completed');
    await waitUntil(async () => (await session(sessionId)).status === 'completed');
    expect(await session(sessionId)).toMatchObject({ end_reason: 'agent-ended' });
    const d = await detail(sessionId);
    const last = d.turns.filter((t: { speaker: string }) => t.speaker === 'assistant').at(-1);
    expect(last).toMatchObject({ text: 'Goodbye, have a nice day!', interrupted: false });
  });
});

describe('agent fields', () => {
  it('validate voicemail and callTools; built-in tool names are reserved', async () => {
    const bad = async (json: Record<string, unknown>) => {
      const r = await p.request('/v1/agents', { method: 'POST', key, json: { name: 'x', ...json } });
      expect(r.status).toBe(400);
      return ((await r.json()) as { error: { param?: string } }).error;
    };
    await bad({ voicemail: { action: 'leave_message' } });
    await bad({ voicemail: { action: 'shout', message: 'hi' } });
    await bad({ callTools: { transferTargets: [{ name: 'ops', to: '555-1234' }] } });
    await bad({
      callTools: {
        transferTargets: [
          { name: 'a', to: '+15550001234' },
          { name: 'a', to: '+15550001235' },
        ],
      },
    });
    await bad({ tools: [{ name: 'transfer_call', description: 'x', url: 'https://example.com/t' }] });
    const ok = await p.request(`/v1/agents/${agents.desk}`, { key });
    expect(((await ok.json()) as { callTools: unknown }).callTools).toMatchObject({
      endCall: true,
      transferTargets: [
        { name: 'sales', mode: 'cold' },
        { name: 'billing', mode: 'warm' },
      ],
    });
  });
});
