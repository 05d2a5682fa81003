import { describe, expect, it } from 'vitest';
import { Scenario } from '../../shared/contracts/agent-tests.ts';
import { playoutFor } from '../../shared/domains/agent-tests/run-scenario.ts';

/**
 * The runner's fast playout (the platform's own tests ask for it to shorten the waits for the agent's replies) never
 * reaches a scenario whose subject is timing against the agent's speech: those are heard in real time whatever the
 * run asked for, so a barge-in, a backchannel or a latency bound is tested as a developer's run tests it.
 */
const scenario = (extra: object, turn: object = {}) =>
  Scenario.parse({ name: 's', turns: [{ say: 'When are you open?', ...turn }], ...extra });

describe('playoutFor', () => {
  it('plays a scenario about what is said at the speed the run asked for, and real time by default', () => {
    expect(playoutFor(scenario({}, { expect: { replyMatches: 'nine' } }), 4)).toBe(4);
    expect(playoutFor(scenario({ impairments: { noiseSnrDb: 20, seed: 1 } }), 4)).toBe(4);
    expect(playoutFor(scenario({}), 1)).toBe(1);
  });

  it('keeps a barge-in, backchannels and a latency bound on real time', () => {
    expect(playoutFor(scenario({}, { bargeInAfterMs: 1500 }), 4)).toBe(1);
    expect(playoutFor(scenario({ impairments: { backchannels: { everyMs: 1500 }, seed: 1 } }), 4)).toBe(1);
    expect(playoutFor(scenario({}, { expect: { maxLatencyMs: 2000 } }), 4)).toBe(1);
  });
});
