import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CalleeScript } from '../../support/doubles/twilio-voice.ts';
import { waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';
import { startCampaignHarness, type CampaignHarness } from './harness.ts';

// Regression: a campaign call whose final status callback never arrives held its concurrency slot forever, so the
// campaign stopped dialling. The reconciler now asks Twilio (GET Calls/{Sid}.json) once the call must have ended
// (ring timeout + maximum duration + margin) and settles it from Twilio's status; when Twilio cannot be asked
// either, it fails the call with the reason after the give-up bound. Bounds here: 5 s ring + 10 s duration + 0.

let h: CampaignHarness;
let p: TestPlatform;
const lost = new Set<string>();

/** Says hello, hears the greeting, hangs up. */
const brief = (loseFinalCallback: boolean): CalleeScript => ({
  answer: 'human',
  loseFinalCallback,
  talk: async (c) => {
    await c.say(await fliteUtterance('Hello?'));
    await c.until(() => c.marksEchoed.length > 0 && !c.playing, 20_000);
  },
});

beforeAll(async () => {
  h = await startCampaignHarness({
    accountSid: 'AClostcallback000000000000000000',
    authToken: 'twilio-auth-token-lost-callback',
    script: (to) => brief(lost.has(to)),
    heard: () => 'Hello?',
    reply: 'Bye.',
    env: {
      RECONCILE_INTERVAL_MS: '500',
      RECONCILE_AFTER_MS: '1000',
      // Its calls are capped at 10 s (below the production minimum of one minute and a reply) to end quickly.
      REALTIME_MIN_CALL_SECONDS: '10',
      CAMPAIGN_RING_TIMEOUT_SECONDS: '5',
      CAMPAIGN_STATUS_MARGIN_SECONDS: '0',
      CAMPAIGN_STATUS_GIVE_UP_SECONDS: '0',
    },
  });
  p = h.p;
}, 120_000);

afterAll(async () => {
  await h?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies read field by field in asserts
type Json = Record<string, any>;

describe('a lost final status callback', () => {
  it('does not hold the slot: Twilio is asked, the call settled, the next recipient dialled', async () => {
    const { apiKey: key } = await p.developer('pro');
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: { name: 'Caller', firstMessage: 'Hello, this is the clinic.', llmModel: 'gpt-4o-mini' },
    });
    const agentId = ((await a.json()) as { id: string }).id;
    // Campaign A: Twilio answers the look-up. Campaign B: Twilio cannot be asked about its first call.
    const phonesA = ['+15550400001', '+15550400002'];
    const phonesB = ['+15550400011', '+15550400012'];
    lost.add(phonesA[0]!).add(phonesB[0]!);
    h.rest.failLookups.add(phonesB[0]!);
    const create = async (phones: string[]) => {
      const res = await p.request('/v1/campaigns', {
        method: 'POST',
        key,
        json: {
          agentId,
          from: '+15550009999',
          maxConcurrency: 1,
          maxDurationSeconds: 10,
          recipients: phones.map((phone) => ({ phone })),
          retry: { maxAttempts: 1, backoff: 0 },
        },
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    const [idA, idB] = [await create(phonesA), await create(phonesB)];
    const finished = (id: string) =>
      waitUntil(
        async () => {
          const d = (await (await p.request(`/v1/campaigns/${id}`, { key })).json()) as Json;
          return d.status === 'completed' ? d : null;
        },
        90_000,
        250,
      );
    const [doneA, doneB] = await Promise.all([finished(idA), finished(idB)]);
    await h.voice.idle();

    // The first calls of both ended at Twilio without a final callback reaching the platform.
    for (const phone of [phonesA[0], phonesB[0]]) {
      const run = h.voice.runs.find((r) => r.to === phone)!;
      expect(run.finalStatus).toBe('completed');
      expect(run.callbacks.some((c) => c.params.CallStatus === 'completed')).toBe(false);
    }
    // A: settled from Twilio's record (completed → answered); the second recipient was then dialled.
    expect(doneA.recipients.map((r: Json) => [r.phone, r.outcome])).toEqual([
      [phonesA[0], 'answered'],
      [phonesA[1], 'answered'],
    ]);
    expect(doneA.recipients[0].attempts[0].status).toBe('completed');
    // B: Twilio could not be asked: failed with the reason; the slot freed all the same.
    expect(doneB.recipients[0]).toMatchObject({
      outcome: 'failed',
      outcomeReason: expect.stringMatching(/status callback never came and twilio could not be asked/),
    });
    expect(doneB.recipients[1].outcome).toBe('answered');
    // One call per recipient, one at a time per campaign: each second call was placed after the first ended.
    for (const phones of [phonesA, phonesB]) {
      const [first, second] = phones.map((ph) => h.voice.runs.find((r) => r.to === ph)!);
      expect(second!.startedAt).toBeGreaterThan(first!.endedAt);
    }
    expect(h.rest.calls.map((f) => f.get('To')).sort()).toEqual([...phonesA, ...phonesB].sort());
  }, 150_000);
});
