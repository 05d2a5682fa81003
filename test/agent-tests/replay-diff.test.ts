import { describe, expect, it } from 'vitest';
import { replayDiff } from '../../shared/domains/agent-tests/replay/diff.ts';
import { replayPlan } from '../../shared/domains/agent-tests/replay/plan.ts';
import type { RecordedCall, RecordedTurn } from '../../shared/domains/agent-tests/replay/recorded-call.ts';

/**
 * The replay's plan and diff over trace rows: which caller turns are played when, which are skipped and why, and
 * how the replay's own turns are matched to them (by the time their audio went out, not by counting).
 */
let idx = 0;
const user = (text: string, startMs: number, endMs: number): RecordedTurn => ({
  idx: idx++,
  speaker: 'user',
  text,
  startMs,
  endMs,
  latencyMs: null,
  interrupted: false,
  cutIn: false,
});
const agent = (text: string, startMs: number, o: Partial<RecordedTurn> = {}): RecordedTurn => ({
  idx: idx++,
  speaker: 'assistant',
  text,
  startMs,
  endMs: startMs + 1000,
  latencyMs: null,
  interrupted: false,
  cutIn: false,
  ...o,
});
/** 10 s of 8 kHz PCM: a recording long enough for every turn below. */
const pcm = Buffer.alloc(16 * 10_000, 1);

function recorded(turns: RecordedTurn[], callerPcm: Buffer | null = pcm): RecordedCall {
  return { sessionId: 'ses_1', callId: 'CA1', agentId: 'agt_1', agentVersion: 1, turns, callerPcm };
}

describe('replay plan', () => {
  it('cuts each caller turn from onset − 200 ms to last speech + 150 ms, never into a neighbour; skips what it cannot play', () => {
    const call = recorded([
      agent('Hello.', 0),
      user('Hi there.', 1000, 2000),
      agent('How can I help?', 2500, { latencyMs: 500 }),
      user('', 3000, 3100),
      user('DTMF 12', 4000, 4000),
      user('Opening hours?', 4100, 5000),
    ]);
    const plan = replayPlan(call);
    expect(plan.turns.map((t) => [t.n, t.atMs, t.pcm.length / 16, t.text])).toEqual([
      [1, 800, 1350, 'Hi there.'],
      // The previous caller turn (the keypad one) ended at 4000: the lead stops there.
      [3, 4000, 1150, 'Opening hours?'],
    ]);
    // An empty transcript was noise, not a turn; a keypad turn is not audio.
    expect([...plan.skipped]).toEqual([[2, 'a keypad turn (DTMF) is not audio']]);
    expect(replayPlan(recorded(call.turns, null)).turns).toEqual([]);
    expect(replayPlan(recorded(call.turns, null)).skipped.get(1)).toBe('the call has no recording');
  });
});

describe('replay diff', () => {
  const then = [
    agent('Hello, front desk.', 0),
    user('What are your hours?', 1000, 2000),
    agent('Nine to five.', 2600, { latencyMs: 600 }),
    user('And Saturday?', 5000, 6000),
    agent('Closed on Saturday.', 6500, { latencyMs: 500 }),
  ];
  const plan = replayPlan(recorded(then));

  it('matches the replay’s caller turns by the time their audio went out, so a turn heard as two stays one row', () => {
    const now = [
      agent('Hi, new desk here.', 0),
      user('What are', 950, 1300),
      user('your hours?', 1500, 2050),
      agent('Nine to five.', 2700, { latencyMs: 650 }),
      user('And Saturday?', 5100, 6000),
      agent('We open at ten on Saturday, and', 6300, { latencyMs: 300, interrupted: true, cutIn: true }),
    ];
    const { turns, summary } = replayDiff(then, now, plan);
    expect(turns.map((t) => [t.index, t.caller.now, t.reply.changed])).toEqual([
      [0, null, true],
      [1, 'What are your hours?', false],
      [2, 'And Saturday?', true],
    ]);
    expect(turns[1]!.latencyMs).toEqual({ then: 600, now: 650 });
    expect(turns[2]).toMatchObject({
      reply: { then: 'Closed on Saturday.', now: 'We open at ten on Saturday, and' },
      interrupted: { then: false, now: true },
      cutIn: { then: false, now: true },
    });
    expect(summary).toEqual({
      turns: 3,
      changedReplies: 2,
      avgLatencyMs: { then: 550, now: 475 },
      interruptions: { then: 0, now: 1 },
      cutIns: { then: 0, now: 1 },
    });
  });

  it('a reply the agent no longer gives is a change; punctuation and case are not', () => {
    const now = [agent('hello front desk', 0), user('What are your hours?', 1000, 2000)];
    const { turns } = replayDiff(then, now, plan);
    expect(turns[0]!.reply.changed).toBe(false);
    expect(turns[1]!.reply).toEqual({ then: 'Nine to five.', now: null, changed: true });
    expect(turns[2]!.caller.now).toBeNull();
  });

  it('aligns by the caller’s utterance when a longer greeting moved the replay’s clock (issue #33)', () => {
    // The greeting now runs long; the replay's platform heard the caller's first turn earlier on its own clock than
    // the turn's planned start (its session started later): by time alone it belonged to no row, and its reply
    // landed on the greeting's.
    const now = [
      agent('Hello and welcome to the front desk of the downtown clinic, how can I help you today?', 0),
      user('What are your hours?', 200, 900),
      agent('Nine to five.', 1500, { latencyMs: 600 }),
      user('And Saturday?', 5100, 6000),
      agent('Closed on Saturday.', 6500, { latencyMs: 500 }),
    ];
    const { turns } = replayDiff(then, now, plan);
    expect(turns.map((t) => [t.index, t.caller.now, t.reply.now])).toEqual([
      [0, null, 'Hello and welcome to the front desk of the downtown clinic, how can I help you today?'],
      [1, 'What are your hours?', 'Nine to five.'],
      [2, 'And Saturday?', 'Closed on Saturday.'],
    ]);
    expect(turns[1]!.reply.changed).toBe(false);
  });
});
