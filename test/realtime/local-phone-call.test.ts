import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { fliteUtterance, tokenFromTwiml, wsUrl } from '../../support/realtime/helpers.ts';

/**
 * A phone call with no vendor key at all (issue 32), over the real Twilio media-stream protocol: the local
 * streaming recogniser hears the caller (no Deepgram), the local reply engine answers from the agent's knowledge
 * (no LLM) and flite speaks (no TTS vendor). The caller hears the greeting, asks a question and hears the answer
 * from the knowledge, then cuts the answer off by speaking over it.
 */
const GREETING = 'Hello, thanks for calling the clinic.';
const HOURS =
  'Our opening hours are from nine in the morning until five in the evening, from Monday to Saturday. ' +
  'On Sundays the clinic is closed, but you can leave a message for the doctor and we will call you back.';

let p: TestPlatform;
let key: string;
let agentId: string;

beforeAll(async () => {
  p = await startTestPlatform({
    env: {
      PUBLIC_BASE_URL: 'https://voice.example.com',
      REALTIME_SESSION_SECRET: 'local-phone-secret-local-phone-secret-01',
      // No vendor at all, whatever the machine's environment holds.
      DEEPGRAM_API_KEY: '',
      OPENAI_API_KEY: '',
      ANTHROPIC_API_KEY: '',
    },
  });
  ({ apiKey: key } = await p.developer('pro'));
  const res = await p.request('/v1/agents/provision', {
    method: 'POST',
    key,
    json: {
      name: 'Clinic front desk',
      firstMessage: GREETING,
      collection: { name: 'clinic' },
      initialContent: [
        { content: HOURS, contentType: 'text' },
        { content: 'Parking is free in the garage behind the building for two hours.', contentType: 'text' },
      ],
    },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  agentId = ((await res.json()) as { agent: { id: string; llmProvider: string } }).agent.id;
}, 120_000);

afterAll(async () => {
  await p?.close();
});

describe('a phone call on local engines only', () => {
  it('greets, answers a question from the knowledge, and stops talking when the caller cuts in', async () => {
    const res = await p.request('/v1/sessions/twilio', {
      method: 'POST',
      key,
      json: { agentId, from: '+15550001111', to: '+15550002222' },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const { twiml, sessionId } = (await res.json()) as { twiml: string; sessionId: string };
    const caller = new TwilioCaller({ url: wsUrl(p.url, '/v1/sessions/twilio/stream'), token: tokenFromTwiml(twiml) });
    await caller.start();

    // The greeting plays to its end.
    await caller.until(() => caller.marksEchoed.length > 0 && !caller.playing, 30_000);
    const greetingMarks = caller.marksEchoed.length;

    // A question: the answer comes from the knowledge, and starts playing.
    await caller.say(await fliteUtterance('What are your opening hours?', 8000, 'kal16'));
    await caller.until(() => caller.playing && caller.marksEchoed.length > greetingMarks, 30_000);
    const clearsBefore = caller.clears.length;

    // Speaking over the answer cuts it off (Twilio is told to clear its buffer).
    await caller.say(await fliteUtterance('Sorry, where can I park my car?', 8000, 'kal16'));
    await caller.until(() => caller.clears.length > clearsBefore, 30_000);

    caller.stop();
    await caller.closed;
    await waitUntil(async () => {
      const { rows } = await p.infra.db.query('select status from rt_sessions where id = $1', [sessionId]);
      return rows[0]?.status === 'completed';
    }, 30_000);

    const { rows: session } = await p.infra.db.query(
      'select stt_provider, tts_provider, llm_provider from rt_sessions where id = $1',
      [sessionId],
    );
    expect(session[0]).toMatchObject({ stt_provider: 'default', tts_provider: 'default', llm_provider: 'local' });
    const { rows: turns } = await p.infra.db.query<{
      speaker: string;
      text: string;
      full_text: string | null;
      interrupted: boolean;
    }>('select speaker, text, full_text, interrupted from rt_turns where session_id = $1 order by idx', [sessionId]);
    expect(turns[0]).toMatchObject({ speaker: 'assistant', text: GREETING });
    // The recogniser heard the question (its words: no transcript is scripted anywhere on this platform), the answer
    // is the knowledge's, and the caller cut it off (`text` is what was played of it, `full_text` all of it).
    // (On a starved CPU a final may come after the turn gave up waiting: that turn is empty, the words come after.)
    const heard = turns.filter((t) => t.speaker === 'user').map((t) => t.text);
    expect(heard, JSON.stringify(turns)).toContainEqual(expect.stringMatching(/opening|hours/));
    const answer = turns.find((t) => t.speaker === 'assistant' && /nine in the morning/.test(t.full_text ?? ''));
    expect(answer, JSON.stringify(turns)).toBeDefined();
    expect(answer!.interrupted).toBe(true);
    expect(answer!.text.length).toBeLessThan(answer!.full_text!.length);
  }, 120_000);
});
