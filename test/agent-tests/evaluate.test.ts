import { describe, expect, it } from 'vitest';
import { evaluate, excerptAround } from '../../shared/domains/agent-tests/evaluate.ts';
import { Scenario } from '../../shared/contracts/agent-tests.ts';

/**
 * What an agent test's checks report (issue #33): a reply the caller cut short is reported with what was said
 * before the interruption and the whole reply, never as `the agent said ""`; a failure's excerpt keeps the match in
 * view however far into a long reply it is.
 */
const START = '2026-11-29T00:00:00.000Z';
const t0 = Date.parse(START);

function run(expectTurn: Record<string, string>, agentTurn: Record<string, unknown>) {
  const scenario = Scenario.parse({ name: 's', turns: [{ say: 'Tell me about your plans.', expect: expectTurn }] });
  return evaluate(
    scenario,
    { turnStartsWall: [t0 + 1000], latencies: [400], cutIns: [false] },
    {
      startedAt: START,
      endReason: 'caller-hangup',
      turns: [
        { speaker: 'assistant', text: 'Hello.', startMs: 0 },
        { speaker: 'user', text: 'Tell me about your plans.', startMs: 1000 },
        { speaker: 'assistant', startMs: 2000, ...agentTurn } as { speaker: string; text: string; startMs: number },
      ],
      toolExecutions: [],
    },
    { costCredits: 0, endReason: 'caller-hangup', error: null },
  ).turns[0]!;
}

describe('agent-test checks', () => {
  it('an interrupted reply: what was said before the interruption, and the whole reply', () => {
    const full = 'Our premium plan costs forty dollars a month and includes everything.';
    const nothing = run({ replyMatches: 'forty dollars' }, { text: '', interrupted: true, fullText: full });
    expect(nothing.fullReply).toBe(full);
    expect(nothing.checks[0]!.passed).toBe(false);
    expect(nothing.checks[0]!.reason).not.toContain('the agent said ""');
    expect(nothing.checks[0]!.reason).toContain('interrupted before it said anything');
    expect(nothing.checks[0]!.reason).toContain(JSON.stringify(full));
    const some = run(
      { replyMatches: 'forty dollars' },
      { text: 'Our premium plan', interrupted: true, fullText: full },
    );
    expect(some.checks[0]!.reason).toMatch(/^the agent said "Our premium plan" before it was interrupted \(its whole/);
    const whole = run({ replyMatches: 'forty' }, { text: full });
    expect(whole.fullReply).toBeUndefined();
    expect(whole.checks[0]!.passed).toBe(true);
  });

  it('a replyNeverMatches failure shows the text around the match, far into a long reply', () => {
    const long = `${'We are open every weekday from nine to five. '.repeat(6)}Sorry, I cannot help with refunds.`;
    const turn = run({ replyNeverMatches: 'refunds' }, { text: long });
    expect(turn.checks[0]!.passed).toBe(false);
    expect(turn.checks[0]!.reason).toContain('cannot help with refunds');
    expect(turn.checks[0]!.reason).toMatch(/^the agent said "refunds" in "…/);
  });

  it('excerpts are bounded and centred', () => {
    const text = `${'a'.repeat(200)}MATCH${'b'.repeat(200)}`;
    const x = excerptAround(text, 200, 5);
    expect(x).toContain('MATCH');
    expect(x.length).toBeLessThanOrEqual(122);
    expect(x.startsWith('…') && x.endsWith('…')).toBe(true);
    expect(excerptAround('short MATCH', 6, 5)).toBe('short MATCH');
  });
});
