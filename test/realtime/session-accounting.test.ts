import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAgent } from '../../shared/domains/agents/db.ts';
import { prepareAgentRuntime } from '../../shared/domains/agents/runtime.ts';
import { newId } from '../../shared/kernel/ids.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import { resolveSessionEngines, speechFor } from '../../shared/domains/realtime/engines.ts';
import { SessionAccounting } from '../../workers/realtime/call/session-accounting.ts';
import { TraceStore } from '../../workers/realtime/call/trace-store.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

let p: TestPlatform;
beforeAll(async () => {
  // A platform OpenAI key makes the LLM usage billable; the local STT and TTS a direct session uses are not.
  p = await startTestPlatform({ roles: ['api'], env: { OPENAI_API_KEY: 'sk-test-accounting' } });
});
afterAll(() => p?.close());

/** A direct session's books, built from the same parts bootstrap.ts gives a CallSession. */
async function books(opts: { sttAudioSeconds?: () => number; logLines?: string[] } = {}) {
  const dev = await p.developer('starter');
  const a = await p.request('/v1/agents', {
    method: 'POST',
    key: dev.apiKey,
    json: { name: 'Books', systemPrompt: 'You answer.', firstMessage: 'Hi.', llmModel: 'gpt-4o-mini' },
  });
  expect(a.status).toBe(201);
  const agent = (await getAgent(p.infra.db, dev.developerId, ((await a.json()) as { id: string }).id))!;
  const sessionId = newId('session');
  const engines = await resolveSessionEngines(p.infra, speechFor(p.infra), dev.developerId, agent, 'direct');
  const runtime = await prepareAgentRuntime(p.infra, {
    developerId: dev.developerId,
    agent,
    conversationId: sessionId,
    requestId: sessionId,
  });
  const lines = opts.logLines;
  const log = lines
    ? createLogger('trace', {}, new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) }))
    : createLogger('silent');
  const trace = new TraceStore(p.infra.db, sessionId);
  const s = { infra: p.infra, sessionId, developerId: dev.developerId, agent, runtime, engines, trace, log };
  const acc = new SessionAccounting({ ...s, transport: { channel: 'direct' } }, opts.sttAudioSeconds ?? (() => 0));
  const started = () =>
    trace.started({
      developerId: dev.developerId,
      agentId: agent.id,
      channel: 'direct',
      sttProvider: engines.sttProvider,
      ttsProvider: engines.ttsProvider,
      llmProvider: runtime.provider,
    });
  return { acc, sessionId, developerId: dev.developerId, started };
}

/** Spends part of the developer's balance on a synthesis of `characters` (the tests size it against a starter's 50,000). */
async function spendCredits(developerId: string, characters: number): Promise<void> {
  const spend = await p.infra.meter.reserve({
    developerId,
    category: 'tts',
    units: characters,
    unit: 'characters',
    provider: 'default',
    billable: true,
    requestId: `req_spend_${developerId}`,
    operation: 'synthesize',
  });
  await spend.commit();
}

/** The developer's ledger in the order it was written. */
/**
 * A minute tick that needs a round trip (ten minutes ahead), then a reply at `replyAtMs`, both asked at once: the
 * order in which they were answered (both must be allowed).
 */
async function tickThenReply(acc: SessionAccounting, replyAtMs: number): Promise<string[]> {
  const order: string[] = [];
  const tick = acc.reserveAhead(1_000, { reply: false, aheadMs: 10 * 60_000 }).then((r) => (order.push('tick'), r));
  const reply = acc.reserveAhead(replyAtMs, { reply: true }).then((r) => (order.push('reply'), r));
  expect(await Promise.all([tick, reply])).toEqual([null, null]);
  return order;
}

async function ledger(developerId: string) {
  const { rows } = await p.infra.db.query<{
    category: string;
    operation: string;
    units: number;
    billable: boolean;
    credits: number;
    status: string;
    request_id: string;
  }>(
    `select category, operation, units::float8 as units, billable, credits::int as credits, status, request_id
       from credit_ledger where developer_id = $1 order by created_at, id`,
    [developerId],
  );
  return rows;
}

const count = async (table: string, sessionId: string) =>
  (await p.infra.db.query<{ n: number }>(`select count(*)::int as n from ${table} where session_id = $1`, [sessionId]))
    .rows[0]!.n;

describe('SessionAccounting', () => {
  it('reserves the closing words with each reply: the goodbye always fits after the reply a cap allows (issue #33)', async () => {
    // 29 s into the call a reply (30 s) still ends inside the first minute; its goodbye (48 characters, ~4 s) does
    // not: the minutes held with the reply cover it.
    const held = async (closingChars: number | undefined) => {
      const { acc, developerId } = await books();
      acc.setLimits({ maxCredits: null, apiKeyId: null, ...(closingChars ? { closingChars } : {}) });
      await acc.holdFirstMinute();
      expect(await acc.reserveAhead(29_000, { reply: true })).toBeNull();
      return (await ledger(developerId)).find((r) => r.operation === 'session.minutes')!.units;
    };
    expect(await held(undefined)).toBe(1);
    expect(await held(48)).toBe(2);
  });

  it('holds the first minute, writes the trace rows, and at the end commits the minutes, then STT, TTS, LLM', async () => {
    let sttSeconds = 12.34;
    const { acc, sessionId, developerId, started } = await books({ sttAudioSeconds: () => sttSeconds });

    await acc.holdFirstMinute();
    // The first minute, and in the same statement the first two replies' billed items (here the LLM; this
    // developer's STT and TTS are local, free): the first reply's check then needs no round trip.
    expect(await ledger(developerId)).toMatchObject([
      { category: 'session', operation: 'session.minutes', units: 1, status: 'reserved', request_id: sessionId },
      { category: 'llm', operation: 'session.llm', status: 'reserved', request_id: sessionId },
    ]);
    expect(await acc.reserveAhead(1_000, { reply: true })).toBeNull();

    acc.write(started());
    await acc.flush(); // the session row, before the rows that refer to it
    acc.record({ idx: 0, speaker: 'user', text: 'Hello?', startMs: 100, endMs: 900, sttMs: 40 });
    acc.record({ idx: 1, speaker: 'assistant', text: 'Hi.', startMs: 1700, endMs: 2500, latencyMs: 800 });
    acc.record({ idx: 2, speaker: 'user', text: 'Opening hours?', startMs: 3000, endMs: 3900, sttMs: 30 });
    acc.record({ idx: 3, speaker: 'assistant', text: 'Nine to', startMs: 4300, endMs: 5000, latencyMs: 400 });
    acc.tool(3, { name: 'lookup', ok: true, error: null, durationMs: 120, atMs: 4100 });
    acc.interruption({ turnIdx: 3, atMs: 4800, detectionMs: 150, stopMs: 20, bleedWords: 1, reason: 'speech' });
    acc.ttsChars(120);
    acc.ttsChars(30);
    acc.llmTokens(250);
    await acc.flush();
    expect(await count('rt_turns', sessionId)).toBe(4);
    expect(await count('rt_tool_executions', sessionId)).toBe(1);
    expect(await count('rt_interruptions', sessionId)).toBe(1);

    expect(acc.metrics(61_000, { confirmed: 1, dropped: 2, llmChars: 10, ttsChars: 7 })).toEqual({
      totalDurationMs: 61_000,
      avgTurnLatencyMs: 600,
      toolExecutions: 1,
      interruptions: 1,
      turns: 4,
      sttAudioSeconds: 12.3,
      ttsCharacters: 150,
      llmTokens: 250,
      preparedReplies: 1,
      preparedRepliesDropped: 2,
      droppedLlmTokens: 3,
      droppedTtsCharacters: 7,
      preparedDroppedWentOn: 0,
      preparedDroppedWordsChanged: 0,
      preparedDroppedFinalDiffers: 0,
      sttFallbackSeconds: 0,
      sttEngineSwitches: 0,
    });

    // Caller audio counted after the metrics (a batch transcription finishing as the call ends) is still billed.
    sttSeconds = 20.2;
    await acc.settle(61_000);
    const rows = await ledger(developerId);
    expect(rows).toMatchObject([
      // In the order the holds were opened: the LLM's with the first minute, the free engines' at the end.
      { category: 'session', operation: 'session.minutes', units: 2, billable: true, status: 'committed' },
      { category: 'llm', operation: 'session.llm', units: 250, billable: true, status: 'committed' },
      { category: 'stt', operation: 'session.stt', units: 21, billable: false, credits: 0, status: 'committed' },
      { category: 'tts', operation: 'session.tts', units: 150, billable: false, credits: 0, status: 'committed' },
    ]);
    expect(rows[0]!.credits).toBeGreaterThan(0);
    expect(rows[1]!.credits).toBeGreaterThan(0);
    for (const r of rows) expect(r.request_id).toBe(sessionId);
  });

  it('out of credits: the hold is refused, and the end charges no minutes and no unused engine', async () => {
    const { acc, developerId } = await books();
    await spendCredits(developerId, 50_000); // a starter developer's whole monthly balance
    await expect(acc.holdFirstMinute()).rejects.toMatchObject({ code: 'insufficient_credits' });
    await acc.settle(5_000);
    expect(await ledger(developerId)).toMatchObject([{ category: 'tts', operation: 'synthesize' }]);
  });

  it('reserves each reply ahead: a balance that cannot cover it answers `balance`; usage past it is waived with why', async () => {
    const { acc, developerId } = await books();
    await spendCredits(developerId, 50_000 - 25); // leaves 25 credits: the first minute (20) and 5
    await acc.holdFirstMinute();
    // Nothing used yet but the minute: the usage so far is covered.
    expect(await acc.reserveAhead(5_000, { reply: false, aheadMs: 20_000 })).toBeNull();
    // The next reply: the prompt and the agent's output limit (1024 tokens, ~103 credits) do not fit in 5.
    expect(await acc.reserveAhead(5_000, { reply: true })).toBe('balance');
    // A vendor reports usage nobody could reserve (it came after the last check): charged to the balance, the rest
    // recorded as waived with its reason.
    acc.llmTokens(2_000);
    await acc.settle(30_000);
    const { rows } = await p.infra.db.query<{
      operation: string;
      credits: number;
      credits_waived: number;
      waived_reason: string;
    }>(
      `select operation, credits, credits_waived, waived_reason from credit_ledger
        where developer_id = $1 and operation like 'session.%' order by created_at, id`,
      [developerId],
    );
    const llm = rows.find((r) => r.operation === 'session.llm')!;
    expect(llm.credits + llm.credits_waived).toBe(200);
    expect(llm.credits).toBe(5);
    expect(llm.waived_reason).toBe('balance');
    const { rows: acct } = await p.infra.db.query<{ used: number }>(
      'select used from credit_accounts where developer_id = $1',
      [developerId],
    );
    expect(acct[0]!.used).toBe(50_000);
  });

  it('a look-ahead the balance cannot cover in full holds nothing, so the next reply still fits', async () => {
    const { acc, developerId } = await books();
    await spendCredits(developerId, 50_000 - 20 - 115); // leaves the first minute (20) and 115: one reply (~103), not two
    await acc.holdFirstMinute();
    // Two replies ahead do not fit: nothing is grown (a second minute held here would leave too little for the LLM).
    expect(await acc.reserveAhead(5_000, { reply: true, replies: 2 })).toBeNull();
    const { rows } = await p.infra.db.query<{ used: number }>(
      'select used from credit_accounts where developer_id = $1',
      [developerId],
    );
    expect(rows[0]!.used).toBe(50_000 - 115);
    // The reply itself is reserved, and fits.
    expect(await acc.reserveAhead(5_000, { reply: true })).toBeNull();
    await acc.settle(10_000);
  });

  it('a per-call credit cap stops the reply that would pass it, before anything is held for it', async () => {
    const { acc } = await books();
    acc.setLimits({ maxCredits: 50, apiKeyId: null });
    await acc.holdFirstMinute();
    expect(await acc.reserveAhead(1_000, { reply: true })).toBe('max-credits');
    acc.setLimits({ maxCredits: 500, apiKeyId: null });
    expect(await acc.reserveAhead(1_000, { reply: true })).toBeNull();
    await acc.settle(1_000);
  });

  it('answers a reply the holds already cover at once, not behind a reservation waiting on the database', async () => {
    const { acc } = await books();
    await acc.holdFirstMinute();
    // The look-ahead: two replies held.
    expect(await acc.reserveAhead(1_000, { reply: true, replies: 2 })).toBeNull();
    // A minute tick that needs more minutes held (a round trip), then the next reply, covered by the look-ahead.
    expect(await tickThenReply(acc, 2_000)).toEqual(['reply', 'tick']);
    await acc.settle(2_000);
  });

  it('the first reply finds its hold in place from the start: it is not queued behind a reservation in flight', async () => {
    const { acc } = await books();
    await acc.holdFirstMinute();
    // A minute tick that needs a round trip, then the call's first reply, prepared while the caller still speaks.
    expect(await tickThenReply(acc, 3_000)).toEqual(['reply', 'tick']);
    await acc.settle(3_000);
  });

  it('a trace write that fails is logged, and the end still waits for the others and settles', async () => {
    const logLines: string[] = [];
    const { acc, sessionId, developerId, started } = await books({ logLines });
    await acc.holdFirstMinute();
    // No session row yet: the turn row's foreign key refuses it.
    acc.record({ idx: 0, speaker: 'user', text: 'Too early', startMs: 0, endMs: 10 });
    await acc.flush();
    acc.write(started());
    await acc.flush();
    acc.record({ idx: 1, speaker: 'user', text: 'Hello?', startMs: 100, endMs: 900 });
    await acc.flush();
    expect(logLines.filter((l) => l.includes('trace write failed') && l.includes(sessionId))).toHaveLength(1);
    expect(await count('rt_turns', sessionId)).toBe(1);
    expect(acc.metrics(1_000, { confirmed: 0, dropped: 0, llmChars: 0, ttsChars: 0 }).turns).toBe(2);
    await acc.settle(1_000);
    // No reply was made: the LLM held ahead is settled at nothing.
    expect(await ledger(developerId)).toMatchObject([
      { operation: 'session.minutes', units: 1, status: 'committed' },
      { operation: 'session.llm', units: 0, credits: 0, status: 'committed' },
    ]);
  });
});
