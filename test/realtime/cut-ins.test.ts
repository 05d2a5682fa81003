import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistantTurn, assistantTurnRecord, suspectCutIn } from '../../workers/realtime/pipeline/assistant-turn.ts';
import { TraceStore } from '../../workers/realtime/call/trace-store.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

describe('suspected cut-ins: the decision', () => {
  const reply = (firstSendAt: number | null, lastSpeechAt: number | null = 1000) => {
    const t = assistantTurn('t1', 1, 1200, { userText: 'hello', lastSpeechAt, endpointAt: 1200 });
    t.firstSendAt = firstSendAt;
    return t;
  };

  it('marks a reply the caller talked into within 500 ms of its first audio, or was already talking over', () => {
    const soon = reply(1500);
    suspectCutIn(soon, 1900);
    expect(soon.suspectedCutIn).toBe(true);
    const over = reply(1500);
    suspectCutIn(over, 1450); // the caller had started again before the audio went out
    expect(over.suspectedCutIn).toBe(true);
    expect(assistantTurnRecord(over, { spoken: '', interrupted: true, now: 2000 }).record.suspectedCutIn).toBe(true);
  });

  it('does not mark a barge-in later into the reply, a reply nobody heard, or the greeting', () => {
    const late = reply(1500);
    suspectCutIn(late, 2100);
    expect(late.suspectedCutIn).toBe(false);
    const unheard = reply(null);
    suspectCutIn(unheard, 1300);
    expect(unheard.suspectedCutIn).toBe(false);
    const greeting = reply(100, null);
    suspectCutIn(greeting, 300);
    expect(greeting.suspectedCutIn).toBe(false);
  });
});

describe('suspected cut-ins: stored per turn, a rate per agent', () => {
  let p: TestPlatform;
  let key: string;
  let developerId: string;
  const agents: string[] = [];

  beforeAll(async () => {
    p = await startTestPlatform({ roles: ['api'] });
    ({ apiKey: key, developerId } = await p.developer());
    for (const name of ['Front desk', 'Billing']) {
      const r = await p.request('/v1/agents', { key, method: 'POST', json: { name, systemPrompt: 'Help.' } });
      expect(r.status).toBe(201);
      agents.push(((await r.json()) as { id: string }).id);
    }
    // Agent 0: 4 replies to speech, 1 cut in on; agent 1: 2 replies, none. Greetings (no latency) do not count.
    const plan: Array<[agent: number, cuts: boolean[]]> = [
      [0, [false, true]],
      [0, [false, false]],
      [1, [false, false]],
    ];
    for (const [k, [a, cuts]] of plan.entries()) {
      const trace = new TraceStore(p.infra.db, `ses_cutin_${k}`);
      await trace.started({
        developerId,
        agentId: agents[a]!,
        channel: 'twilio',
        callSid: `CA_cutin_${k}`,
        sttProvider: 'deepgram',
        ttsProvider: 'local',
        llmProvider: 'openai',
      });
      await trace.turn({ idx: 0, speaker: 'assistant', text: 'Hello.', startMs: 0, endMs: 900 });
      for (const [j, cut] of cuts.entries()) {
        await trace.turn({ idx: 1 + 2 * j, speaker: 'user', text: 'Tuesday?', startMs: 1000, endMs: 1800 });
        await trace.turn({
          idx: 2 + 2 * j,
          speaker: 'assistant',
          text: 'Sure.',
          startMs: 2100,
          endMs: 2600,
          latencyMs: 300,
          interrupted: cut,
          suspectedCutIn: cut,
        });
      }
    }
  }, 120_000);
  afterAll(() => p?.close());

  it('reports the rate per agent, one agent on request, and in the interruption-quality summary', async () => {
    const all = await p.request('/v1/observability/sessions/cut-ins', { key });
    expect(all.status).toBe(200);
    const body = (await all.json()) as { data: unknown[] };
    expect(body.data).toEqual(
      expect.arrayContaining([
        { agentId: agents[0], replies: 4, suspectedCutIns: 1, rate: 0.25 },
        { agentId: agents[1], replies: 2, suspectedCutIns: 0, rate: 0 },
      ]),
    );
    expect(body.data).toHaveLength(2);
    const one = await p.request(`/v1/observability/sessions/cut-ins?agentId=${agents[1]}`, { key });
    expect(((await one.json()) as { data: unknown[] }).data).toEqual([
      { agentId: agents[1], replies: 2, suspectedCutIns: 0, rate: 0 },
    ]);
    const iq = await p.request(`/v1/observability/sessions/interruption-quality?agentId=${agents[0]}`, { key });
    expect(((await iq.json()) as { suspectedCutIns: unknown }).suspectedCutIns).toEqual({
      replies: 4,
      suspected: 1,
      rate: 0.25,
    });
    const later = new Date(Date.now() + 3600_000).toISOString();
    const none = await p.request(`/v1/observability/sessions/cut-ins?from=${later}`, { key });
    expect(await none.json()).toMatchObject({ from: later, data: [] });
  });

  it('marks the turn in the session detail and counts it in its metrics', async () => {
    const r = await p.request('/v1/observability/sessions/ses_cutin_0', { key });
    const d = (await r.json()) as {
      turns: Array<{ index: number; suspectedCutIn: boolean }>;
      metrics: { suspectedCutIns: number };
    };
    expect(d.metrics.suspectedCutIns).toBe(1);
    expect(d.turns.filter((t) => t.suspectedCutIn).map((t) => t.index)).toEqual([4]);
  });

  it("refuses a bad range and another developer's agent with the error envelope", async () => {
    const bad = await p.request('/v1/observability/sessions/cut-ins?from=yesterday', { key });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: expect.any(Object) });
    const other = await p.developer();
    const foreign = await p.request(`/v1/observability/sessions/cut-ins?agentId=${agents[0]}`, { key: other.apiKey });
    expect(foreign.status).toBe(404);
    const empty = await p.request('/v1/observability/sessions/cut-ins', { key: other.apiKey });
    expect(await empty.json()).toMatchObject({ data: [] });
  });
});
