import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScenarioFile } from '../../shared/contracts/agent-tests.ts';
import { allChecks } from '../../shared/domains/agent-tests/results.ts';
import { describeResult, runSuite } from '../../shared/domains/agent-tests/suite.ts';
import { FAST_PLAYOUT } from '../../support/realtime/fast-line.ts';
import { frontDeskPlatform } from './fixtures.ts';

/**
 * Agent tests on noisy lines, end to end (issue 31): the real platform (api + realtime) behind the runner's
 * simulated STT and scripted LLM, a flite caller over the Twilio media path with line noise of a kind. A normal
 * question at 15 dB SNR passes (the simulated STT used to hear white noise at 20 dB for the caller and the call went
 * nowhere); under a line louder than the caller the result's root cause names the simulator, not the agent.
 */
let platform: Awaited<ReturnType<typeof frontDeskPlatform>>;
beforeAll(async () => {
  platform = await frontDeskPlatform();
}, 60_000);
afterAll(async () => platform?.close());

const here = () => Promise.resolve({ url: platform.p.url, vendors: platform.vendors, kind: 'scripted' as const });
const as = () => ({ apiKey: platform.key, agentId: platform.agentId });
/** The agent's audio plays faster than real time at the caller; the caller speaks in real time (fast-line.ts). */
const fast = { playout: FAST_PLAYOUT };
const scenario = (name: string, noise: string) => ({
  file: 'noisy.yaml',
  scenario: parseScenarioFile(
    `
name: ${name}
llm: {replies: ["On Saturday we open at nine and close at noon."]}
impairments: {noise: ${noise}, seed: 4}
turns:
  - say: "Hi, what are your opening hours on Saturday?"
    expect: {replyMatches: "(?i)saturday"}
`,
    'noisy.yaml',
  )[0]!,
});

describe('agent tests on a noisy line', () => {
  it('a normal question 15 dB over white and pink line noise passes, with no root cause', async () => {
    const results = await runSuite(
      as(),
      [scenario('white 15', '{type: white, snrDb: 15}'), scenario('pink 15', '{type: pink, snrDb: 15}')],
      here,
      fast,
    );
    for (const r of results) {
      expect({ name: r.name, failed: allChecks(r).filter((c) => !c.passed), why: r.rootCause }).toEqual({
        name: r.name,
        failed: [],
        why: [],
      });
      expect(r.turns[0]!.heard).toMatch(/opening hours on saturday/i);
      // Heard once: the greeting was not cut by the line's noise taken for the caller.
      expect(r.transcript.filter((t) => t.speaker !== 'assistant' && t.speaker !== 'agent')).toHaveLength(1);
    }
  }, 120_000);

  it('under a line louder than the caller the root cause says the simulated STT heard no speech', async () => {
    const [r] = await runSuite(as(), [scenario('drowned', '{type: white, snrDb: -5}')], here, fast);
    expect(r!.passed).toBe(false);
    expect(r!.rootCause[0]).toMatch(
      /^no caller speech detected; line noise floor −\d+ dBFS, the caller's speech at −\d+ dBFS \(-?\d+ dB over it\): the simulated STT heard no speech: the test’s simulator failed, not the agent$/,
    );
    expect(r!.rootCause[1]).toMatch(/^turns\[0\]: the simulated STT heard no speech .*the test’s simulator failed/);
    expect(describeResult(r!)).toContain('! root cause: no caller speech detected');
  }, 120_000);
});
