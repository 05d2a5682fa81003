import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import {
  startDeepgramLiveDouble,
  type DeepgramLiveDouble,
} from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { fliteUtterance, tokenFromTwiml, voicePlatformEnv, wsUrl } from '../../support/realtime/helpers.ts';

/**
 * The turn-taking seams at the API and on a call (issue 30): an agent names its interruption detector, turn
 * detector and input processors; unknown names are a 400 listing the known ones; the OpenAPI document lists each
 * with its options; and an agent on `vad-only` is cut off by a backchannel that the default lets through.
 */
const LONG_REPLY =
  'Our opening hours are from nine in the morning until six in the evening on weekdays. ' +
  'On Saturdays we open at ten and close at four in the afternoon. ' +
  'On Sundays and public holidays the office stays closed, but the phone line is open.';

let p: TestPlatform;
let dg: DeepgramLiveDouble;
let llm: OpenAiChatDouble;
let key: string;

beforeAll(async () => {
  // Every caller asks for the hours, then backchannels over the answer.
  dg = await startDeepgramLiveDouble({ script: (_c, u) => (u === 0 ? 'What are your opening hours?' : 'uh-huh') });
  llm = await startOpenAiChatDouble(
    (body) => {
      const last = (body.messages as Array<{ content: string }>).at(-1)?.content ?? '';
      return { text: /hours/i.test(last) ? LONG_REPLY : 'Sure.' };
    },
    { key: 'sk-test-realtime', tokensPerSecond: 1000 },
  );
  p = await startTestPlatform({ env: voicePlatformEnv(dg, llm) });
  ({ apiKey: key } = await p.developer('pro'));
}, 120_000);

afterAll(async () => {
  await p?.close();
  await dg?.close();
  await llm?.close();
});

async function createAgent(extra: Record<string, unknown>): Promise<Response> {
  return p.request('/v1/agents', {
    method: 'POST',
    key,
    json: { name: 'Front desk', systemPrompt: 'You answer the phone.', firstMessage: 'Hello!', ...extra },
  });
}

describe('agents: the turn-taking seams', () => {
  it('stores the chosen implementations with their options and gives them back', async () => {
    const turnTaking = {
      detector: { name: 'default' },
      interruption: { name: 'vad-only', speaking: { minMs: 250 }, thinking: { minMs: 600 } },
    };
    const audio = { inputProcessors: [{ name: 'highpass', cutoffHz: 120 }] };
    const r = await createAgent({ turnTaking, audio });
    expect(r.status).toBe(201);
    const a = (await r.json()) as { id: string; turnTaking: unknown; audio: unknown };
    expect(a).toMatchObject({ turnTaking, audio });
    const plain = (await (await createAgent({})).json()) as { audio?: unknown };
    expect(plain).not.toHaveProperty('audio');
    const put = await p.request(`/v1/agents/${a.id}`, {
      method: 'PUT',
      key,
      json: { turnTaking: { interruption: { name: 'default', speaking: { forceMs: 1200 } } }, audio: null },
    });
    expect(put.status).toBe(200);
    const updated = (await put.json()) as Record<string, unknown>;
    expect(updated).toMatchObject({ turnTaking: { interruption: { name: 'default' } } });
    expect(updated).not.toHaveProperty('audio');
  });

  it('refuses an unknown implementation with a 400 naming the known ones, at create and at update', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ turnTaking: { interruption: { name: 'semantic' } } }, 'default, vad-only'],
      [{ turnTaking: { detector: { name: 'digit-hold' } } }, 'turnTaking.detector: name must be one of default'],
      [{ audio: { inputProcessors: [{ name: 'denoise' }] } }, 'passthrough, highpass'],
    ];
    const created = (await (await createAgent({})).json()) as { id: string };
    for (const [body, names] of cases) {
      for (const r of [
        await createAgent(body),
        await p.request(`/v1/agents/${created.id}`, { method: 'PUT', key, json: body }),
      ]) {
        expect(r.status).toBe(400);
        const err = (await r.json()) as { error: { type: string; message: string } };
        expect(err.error.type).toBe('invalid_request_error');
        expect(err.error.message).toContain(names);
        expect(err.error.message).not.toMatch(/semantic|digit-hold|denoise/);
      }
    }
    // Options that are not the implementation's are refused too (vad-only has no forceMs).
    const r = await createAgent({ turnTaking: { interruption: { name: 'vad-only', speaking: { forceMs: 900 } } } });
    expect(r.status).toBe(400);
  });

  it('the OpenAPI document lists each implementation with its options', async () => {
    const doc = JSON.stringify(await (await p.request('/openapi.json')).json());
    for (const s of [
      '"vad-only"',
      '"highpass"',
      '"cutoffHz"',
      '"passthrough"',
      '"thinking"',
      '"inputProcessors"',
      '"entity-hold"',
      '"holdMs"',
      '"hesitationMs"',
    ])
      expect(doc).toContain(s);
  });
});

describe('a backchannel over the agent, per interruption detector', () => {
  /** A call to `agentId` that asks for the hours and says "uh-huh" while the long answer plays. */
  async function backchannelOverAnswer(agentId: string): Promise<TwilioCaller> {
    const res = await p.request('/v1/sessions/twilio', {
      method: 'POST',
      key,
      json: { agentId, from: '+15550001111', to: '+15550002222' },
    });
    expect(res.status).toBe(200);
    const twiml = ((await res.json()) as { twiml: string }).twiml;
    const caller = new TwilioCaller({ url: wsUrl(p.url, '/v1/sessions/twilio/stream'), token: tokenFromTwiml(twiml) });
    await caller.start();
    await caller.until(() => caller.marksEchoed.includes('t1:0') && !caller.playing);
    const n = caller.marksEchoed.length;
    await caller.say(await fliteUtterance('What are your opening hours?'));
    // The answer's first sentence has played: the agent is speaking.
    await caller.until(() => caller.marksEchoed.slice(n).some((m) => m.endsWith(':0')));
    expect(caller.playing).toBe(true);
    await caller.say(await fliteUtterance('uh-huh'));
    return caller;
  }

  it('default: the agent talks on through "uh-huh"; vad-only: "uh-huh" cuts it off', async () => {
    const plain = (await (await createAgent({})).json()) as { id: string };
    const vadOnly = (await (await createAgent({ turnTaking: { interruption: { name: 'vad-only' } } })).json()) as {
      id: string;
    };

    const a = await backchannelOverAnswer(plain.id);
    await a.until(() => !a.playing, 30_000);
    expect(a.clears).toHaveLength(0);
    a.stop();
    await a.closed;

    const b = await backchannelOverAnswer(vadOnly.id);
    await b.until(() => b.clears.length > 0, 30_000);
    b.stop();
    await b.closed;
  });
});
