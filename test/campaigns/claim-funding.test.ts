import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionMinuteHold } from '../../shared/domains/billing/session-hold.ts';
import { fundableNewCalls } from '../../shared/domains/campaigns/funding.ts';
import {
  attachCallSession,
  campaignForDispatch,
  claimDueRecipients,
  type DispatchCampaign,
} from '../../shared/domains/campaigns/store.ts';
import { markSessionStarted } from '../../shared/domains/realtime/sessions.ts';
import { newId } from '../../shared/kernel/ids.ts';
import type { TestPlatform } from '../../support/helpers/platform.ts';
import { clearOfUtcDayTurn } from '../../support/helpers/utc-day.ts';
import { createdCampaign, startCampaignHarness, type CampaignHarness } from './harness.ts';

// Regression (seen under load in the suite): a campaign whose daily cap funds one call dialled two. The claim
// counted an attempt as spent only while its session was not started, and the ledger counted it only once its
// first minute's hold was written: between the two (the stream up, the hold not yet committed) the call was in
// neither, and the money was read before the claim's lock, so a dispatcher that had read it earlier could claim again.
// Now the attempts are those whose session holds no minute yet, read under the lock before the money.

let h: CampaignHarness;
let p: TestPlatform;

beforeAll(async () => {
  // No worker role: the test is the dispatcher, and nothing dials what it claims.
  h = await startCampaignHarness({
    accountSid: 'ACclaimfunding0000000000000000000',
    authToken: 'twilio-auth-token-claim-funding',
    script: () => ({ answer: 'human' }),
    heard: () => 'Hello.',
    reply: 'Hi.',
    roles: ['api'],
  });
  p = h.p;
}, 120_000);

afterAll(async () => {
  await h?.close();
});

const claim = (c: DispatchCampaign) =>
  claimDueRecipients(p.infra.db, c.id, { fundable: (tx) => fundableNewCalls(p.infra, c, tx) });

describe('the campaign claim and the money', () => {
  it('an answered call whose first minute is not held yet still takes its share: a cap for one call claims one', async () => {
    // The cap's day must not turn between the spend and the claims that read it.
    await clearOfUtcDayTurn(60_000);
    const { apiKey: key, developerId } = await p.developer('pro');
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: { name: 'Clinic', firstMessage: 'Hello.', llmModel: 'gpt-4o-mini' },
    });
    const agentId = ((await a.json()) as { id: string }).id;
    // One call's first minute (20 credits at the default weights).
    const cap = await p.request('/v1/billing/spending-caps', { method: 'PUT', key, json: { dailyCredits: 20 } });
    expect(cap.status).toBe(200);
    const phones = ['+15550760001', '+15550760002', '+15550760003'];
    const id = await createdCampaign(p, key, { agentId, maxConcurrency: 3, phones });
    const c = (await campaignForDispatch(p.infra.db, id))!;

    // Dispatchers at once: the money funds one call, and one is claimed between them.
    const first = await Promise.all([claim(c), claim(c), claim(c)]);
    expect(first.flatMap((r) => r.ids)).toHaveLength(1);
    const callId = first.flatMap((r) => r.ids)[0]!;

    // The callee answered and the stream started (the session is active); its first minute is not held yet.
    const sessionId = newId('session');
    expect(await attachCallSession(p.infra.db, callId, { sessionId, callSid: 'CA' + '1'.repeat(32) })).toBe(true);
    await markSessionStarted(p.infra.db, sessionId, {
      developerId,
      agentId,
      channel: 'twilio',
      sttProvider: 'default',
      ttsProvider: 'default',
      llmProvider: 'default',
    });
    expect(await claim(c)).toMatchObject({ ids: [] });

    // The hold is written: the cap counts it now, and still nobody else is funded.
    const hold = await p.infra.meter.reserve(sessionMinuteHold(developerId, sessionId, 'twilio'));
    expect(await claim(c)).toMatchObject({ ids: [] });

    // The hold is given back (the call failed before its first minute): the money funds one call again.
    await hold.refund();
    expect((await claim(c)).ids).toHaveLength(0);
    const { rowCount } = await p.infra.db.query(`update campaign_calls set ended_at = now() where id = $1`, [callId]);
    expect(rowCount).toBe(1);
    expect((await claim(c)).ids).toHaveLength(1);
  }, 120_000);
});
