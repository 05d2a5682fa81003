import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScenarioFile } from '../../shared/contracts/agent-tests.ts';
import { junitXml } from '../../shared/domains/agent-tests/junit.ts';
import type { OfflineVendors } from '../../shared/domains/agent-tests/offline-vendors.ts';
import { allChecks } from '../../shared/domains/agent-tests/results.ts';
import { loadScenarioFiles, runSuite } from '../../shared/domains/agent-tests/suite.ts';
import { FRONT_DESK_SUITE as SUITE, frontDeskPlatform } from './fixtures.ts';
import type { TestPlatform } from '../../support/helpers/platform.ts';
import { FAST_PLAYOUT } from '../../support/realtime/fast-line.ts';

/**
 * Agent tests end to end, offline: the real platform (api + realtime) on port 0 with its STT and LLM pointed at
 * the runner's simulated STT and scripted LLM, a flite-voiced caller over the real Twilio media-stream path with a
 * seeded bad line. One scenario holds; a "broken agent" whose scripted reply mentions prices fails with the reason.
 */
let p: TestPlatform;
let vendors: OfflineVendors;
let key: string;
let agentId: string;
let dir: string;
let platform: Awaited<ReturnType<typeof frontDeskPlatform>> | undefined;

beforeAll(async () => {
  platform = await frontDeskPlatform();
  ({ p, vendors, key, agentId } = platform);
  dir = await mkdtemp(join(tmpdir(), 'agent-tests-'));
}, 60_000);

/** Every scenario on this test's platform, pointed at the runner's vendors (its LLM answers with the script). */
const here = () => Promise.resolve({ url: p.url, vendors, kind: 'scripted' as const });
/**
 * The agent's audio plays faster than real time at the caller (support/realtime/fast-line.ts) where a test's subject
 * is what the call says and leaves; the runner keeps scenarios about timing (barge-in, backchannels) on real time.
 */
const fast = { playout: FAST_PLAYOUT };

afterAll(async () => {
  await platform?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('agent tests over the Twilio media path', () => {
  it('passes a scenario that holds and fails the broken agent with the reason; JUnit says the same', async () => {
    const scenarios = parseScenarioFile(SUITE, 'front-desk.yaml').map((scenario) => ({
      file: 'front-desk.yaml',
      scenario,
    }));
    const [ok, broken] = await runSuite({ apiKey: key, agentId }, scenarios, here, fast);

    expect(ok!.error).toBeNull();
    expect(allChecks(ok!).filter((c) => !c.passed)).toEqual([]);
    expect(ok!.passed).toBe(true);
    expect(ok!.stt).toMatch(/simulated/);
    expect(ok!.llm).toMatch(/scripted/);
    expect(ok!.turns[0]!.reply).toMatch(/saturday/i);
    // The platform heard the scenario's words (through the simulated STT, after the pause).
    expect(ok!.turns[0]!.heard).toMatch(/saturday morning/i);
    expect(ok!.transcript.map((t) => t.text)).toContain('Hello, thanks for calling.');
    expect(ok!.lostFrames).toBeGreaterThan(0);

    expect(broken!.passed).toBe(false);
    const why = allChecks(broken!).find((c) => !c.passed)!;
    expect(why.expectation).toBe('expect.replyNeverMatches (?i)price');
    expect(why.reason).toMatch(/the agent said "price" in "A cleaning is ninety dollars; our prices/);

    const xml = junitXml(agentId, [ok!, broken!]);
    const file = join(dir, 'junit.xml');
    await import('node:fs/promises').then((fs) => fs.writeFile(file, xml));
    const text = await readFile(file, 'utf8');
    expect(text).toMatch(/<testsuites name="agent tests [^"]+" tests="2" failures="1"/);
    expect(text).toMatch(
      /<testcase [^>]*name="never talks about prices"[^>]*>\s*<failure message="expect.replyNeverMatches/,
    );
    expect(text.match(/<failure/g)).toHaveLength(1);
  }, 120_000);

  it('passes the documented example suite (pauses, a bad line, a barge-in)', async () => {
    const scenarios = await loadScenarioFiles(['examples/agent-tests/front-desk.yaml']);
    const results = await runSuite({ apiKey: key, agentId }, scenarios, here, fast);
    for (const r of results)
      expect({ name: r.name, failed: allChecks(r).filter((c) => !c.passed) }).toEqual({ name: r.name, failed: [] });
    const barge = results[2]!;
    expect(barge.turns[1]!.reply).toMatch(/holidays/);
  }, 180_000);

  /** A reply long enough (about 13 s of speech) for the caller to say several backchannels over it. */
  const LONG_REPLY =
    'We are open from nine in the morning until five in the afternoon on weekdays, from ten until two on ' +
    'Saturdays, and we are closed on Sundays and on public holidays, but you can always leave us a message.';
  const listening = (name: string, words: string[] | undefined, turns: object[], replies: string[]) => ({
    file: 'backchannels.json',
    scenario: parseScenarioFile(
      JSON.stringify({
        name,
        llm: { replies },
        impairments: { clipPct: 5, backchannels: { everyMs: 1500, ...(words ? { words } : {}) }, seed: 5 },
        turns,
        expect: { ignoresBackchannels: true },
      }),
      'backchannels.json',
    )[0]!,
  });

  it('the agent talks through caller backchannels on a clipped line, and the next turn is heard as said', async () => {
    const [r] = await runSuite(
      { apiKey: key, agentId },
      [
        listening(
          'listens',
          undefined,
          [
            { say: 'What are your opening hours?' },
            { say: 'Thank you, goodbye.', expect: { replyMatches: '(?i)bye' } },
          ],
          [LONG_REPLY, 'Goodbye, and thanks for calling.'],
        ),
      ],
      here,
    );
    expect(r!.error).toBeNull();
    expect(allChecks(r!).filter((c) => !c.passed)).toEqual([]);
    expect(r!.turns[0]!.backchannels).toBeGreaterThanOrEqual(2);
    expect(r!.turns[0]!.backchannelInterruptions).toBe(0);
    expect(r!.backchannels.filter((b) => b.interrupted || b.tookTurn)).toEqual([]);
    // The whole reply was played (an interrupted one is stored as what was heard), and the turn after the
    // backchannels is heard as said and answered with the next scripted reply: nothing shifted.
    expect(r!.turns[0]!.reply).toContain('leave us a message');
    expect(r!.turns[1]!.heard).toMatch(/^thank you, goodbye\.?$/i);
    expect(r!.turns[1]!.reply).toMatch(/^Goodbye, and thanks for calling/);
  }, 120_000);

  it('reports a backchannel the platform takes for a barge-in', async () => {
    // "really" is not a backchannel to the platform (a word that asks something may take the turn): said as one,
    // it shows how a result reports a backchannel that cut the agent off. ("mm-hm" did, until hums were matched
    // by shape: workers/realtime/pipeline/input/turn-detector.ts.)
    const [r] = await runSuite(
      { apiKey: key, agentId },
      [
        listening(
          'really',
          ['really'],
          // The caller stays on the line a while after the cut reply, as a puzzled caller would.
          [{ say: 'What are your opening hours?' }, { say: 'Hello?', silenceBeforeMs: 3000 }],
          [LONG_REPLY, 'Sorry, go on.', 'I said we open at nine.'],
        ),
      ],
      here,
    );
    expect(r!.error).toBeNull();
    expect(r!.passed).toBe(false);
    // The platform stops the agent for it, takes it as the caller's turn and answers it with the next reply.
    const bad = r!.backchannels.find((b) => b.interrupted)!;
    expect(bad).toMatchObject({ turn: 0, word: 'really', interrupted: true, tookTurn: true });
    expect(r!.turns[0]!.backchannelInterruptions).toBeGreaterThanOrEqual(1);
    const why = allChecks(r!).find((c) => !c.passed)!;
    expect(why.expectation).toBe('expect.ignoresBackchannels');
    expect(why.reason).toMatch(
      /^"really" at \d+\.\d s \(over turn 0's reply\) interrupted the agent and was taken as a caller turn/,
    );
    expect(r!.turns[0]!.reply).not.toContain('leave us a message');
    expect(r!.transcript).toContainEqual({ speaker: 'user', text: 'really' });
    expect(r!.turns[0]!.reply).toMatch(/Sorry, go on\.$/);
  }, 120_000);

  it('a simulated STT word error rate mishears words, seeded, and the result says which STT heard', async () => {
    const said = 'I would like to book a cleaning for my daughter next Thursday afternoon please';
    const scenario = (seed: number) => ({
      file: 'wer.yaml',
      scenario: parseScenarioFile(
        JSON.stringify({
          name: `mishears (seed ${seed})`,
          llm: { replies: ['Okay.'] },
          impairments: { sttWordErrorRate: 0.5, seed },
          turns: [{ say: said }],
        }),
        'wer.json',
      )[0]!,
    });
    const [a, b] = await runSuite({ apiKey: key, agentId }, [scenario(3), scenario(3)], here, fast);
    expect(a!.error).toBeNull();
    expect(a!.stt).toMatch(/50 % word errors/);
    const heard = a!.turns[0]!.heard;
    expect(heard).not.toBe('');
    expect(heard.toLowerCase()).not.toBe(said.toLowerCase());
    // Without errors the same caller is heard word for word.
    const [clean] = await runSuite(
      { apiKey: key, agentId },
      [{ file: 'clean.json', scenario: { ...scenario(3).scenario, impairments: undefined } }],
      here,
      fast,
    );
    expect(clean!.turns[0]!.heard.replace(/[.?!]$/, '').toLowerCase()).toBe(said.toLowerCase());
    expect(b!.turns[0]!.heard).not.toBe('');
  }, 120_000);
});
