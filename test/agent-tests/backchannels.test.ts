import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parseScenarioFile } from '../../shared/contracts/agent-tests.ts';
import { backchannelPlan, ignoresBackchannelsCheck } from '../../shared/domains/agent-tests/backchannels.ts';
import { startOfflineVendors, type OfflineVendors } from '../../shared/domains/agent-tests/offline-vendors.ts';

/**
 * Caller backchannels, below the phone call (run.test.ts has them end to end): the format, the seeded sequence,
 * and the simulated STT hearing each backchannel as its own word without shifting the scenario's turns — also when
 * it misses one (lost on the line) or hears one as two stretches.
 */
describe('backchannels in the format', () => {
  it('fills the defaults, and refuses an expectation without backchannels or a sentence as a backchannel', () => {
    const [s] = parseScenarioFile(`
name: listens
impairments: {backchannels: {}, clipPct: 5, seed: 3}
turns: [{say: "What are your hours?"}]
expect: {ignoresBackchannels: true}
`);
    expect(s!.impairments!.backchannels).toEqual({
      everyMs: 2500,
      words: ['mm-hmm', 'uh-huh', 'okay', 'right', 'yeah'],
    });
    expect(() =>
      parseScenarioFile('name: x\nturns: [{say: hi}]\nexpect: {ignoresBackchannels: true}', 'f.yaml'),
    ).toThrow(/^f\.yaml: expect\.ignoresBackchannels: needs impairments\.backchannels/);
    expect(() =>
      parseScenarioFile('name: x\nimpairments: {backchannels: {words: ["wait let me think"]}}\nturns: [{say: hi}]'),
    ).toThrow(/impairments\.backchannels\.words\.0: up to three words/);
    expect(() => parseScenarioFile('name: x\nimpairments: {backchannels: {everyMs: 200}}\nturns: [{say: hi}]')).toThrow(
      /everyMs/,
    );
  });

  it('draws the same words and gaps from the same seed, others from another', () => {
    const cfg = { everyMs: 2000, words: ['mm-hmm', 'okay', 'right'] };
    const take = (seed: number) => {
      const next = backchannelPlan(cfg, seed);
      return Array.from({ length: 12 }, () => next());
    };
    const a = take(7);
    expect(take(7)).toEqual(a);
    expect(take(8)).not.toEqual(a);
    for (const b of a) {
      expect(cfg.words).toContain(b.word);
      expect(b.gapMs).toBeGreaterThanOrEqual(1200);
      expect(b.gapMs).toBeLessThanOrEqual(2800);
    }
    expect(new Set(a.map((b) => b.word)).size).toBeGreaterThan(1);
  });

  it('fails ignoresBackchannels when none was said or one interrupted, saying which', () => {
    expect(ignoresBackchannelsCheck([])).toMatchObject({ passed: false, reason: /no backchannel was said/ });
    const ok = { turn: 0, word: 'okay', atMs: 4200, interrupted: false, tookTurn: false };
    expect(ignoresBackchannelsCheck([ok, { ...ok, word: 'right' }])).toEqual({
      expectation: 'expect.ignoresBackchannels',
      passed: true,
      reason: 'the agent talked on through 2 backchannels (okay, right)',
    });
    expect(ignoresBackchannelsCheck([ok, { ...ok, turn: null, word: 'mm-hm', interrupted: true }]).reason).toBe(
      '"mm-hm" at 4.2 s (over the greeting) interrupted the agent',
    );
  });
});

describe('the simulated STT hears backchannels as their own words', () => {
  let vendors: OfflineVendors;
  beforeAll(async () => {
    vendors = await startOfflineVendors();
  });
  afterAll(async () => vendors?.close());

  /** 20 ms chunks of 8 kHz PCM: a loud tone (speech to an energy detector) or silence. */
  const audio = (ms: number, loud: boolean) => {
    const pcm = Buffer.alloc(ms * 16);
    if (loud) for (let i = 0; i < ms * 8; i++) pcm.writeInt16LE(Math.round(3000 * Math.sin(i / 5)), i * 2);
    return pcm;
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('a missed backchannel or one heard as two stretches shifts no turn', async () => {
    vendors.use(
      { name: 'bc', transport: 'twilio', callerVoice: 'kal', llm: { replies: ['Okay.'] }, turns: [{ say: 'a' }] },
      ['first turn', 'second turn', 'third turn'],
    );
    const url = `${vendors.env.DEEPGRAM_BASE_URL!.replace(/^http/, 'ws')}/v1/listen?encoding=linear16&sample_rate=8000`;
    const ws = new WebSocket(url, { headers: { authorization: `Token ${vendors.env.DEEPGRAM_API_KEY}` } });
    const finals: string[] = [];
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as {
        is_final?: boolean;
        channel?: { alternatives: { transcript: string }[] };
      };
      if (m.is_final) finals.push(m.channel!.alternatives[0]!.transcript);
    });
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    const speak = (ms: number) => {
      ws.send(audio(ms, true));
      ws.send(audio(300, false));
    };
    const heard = async (n: number) => {
      for (let i = 0; i < 100 && finals.length < n; i++) await sleep(20);
      return [...finals];
    };

    speak(400);
    expect(await heard(1)).toEqual(['first turn']);
    // A backchannel heard whole, then one lost on the line (nothing heard), then one the STT hears as two stretches
    // (a pause inside "uh-huh"): each is the backchannel's word.
    vendors.hearBackchannel('okay');
    speak(300);
    expect(await heard(2)).toEqual(['first turn', 'okay']);
    vendors.hearBackchannel('mm-hmm');
    ws.send(audio(400, false));
    vendors.hearBackchannel('uh-huh');
    speak(200);
    speak(200);
    expect(await heard(4)).toEqual(['first turn', 'okay', 'uh-huh', 'uh-huh']);
    // The caller's wait is over: its next turn is the script's next line, as if no backchannel had been said.
    vendors.hearBackchannel(null);
    speak(400);
    expect(await heard(5)).toEqual(['first turn', 'okay', 'uh-huh', 'uh-huh', 'second turn']);
    // A backchannel missed entirely shifts nothing either.
    vendors.hearBackchannel('right');
    ws.send(audio(400, false));
    vendors.hearBackchannel(null);
    speak(400);
    expect(await heard(6)).toEqual(['first turn', 'okay', 'uh-huh', 'uh-huh', 'second turn', 'third turn']);
    ws.close();
  });
});
