import {
  backtrackingPattern,
  fileWebhook,
  floodTestPool,
  legalSynthesisLoad,
  tenantRequest,
  traversalKey,
  unspeakableWord,
  type Outcome,
  type Tenant,
} from '../../support/abuse/hostile-tenant.ts';
import { LONG, UTTERANCES } from '../voice-latency/script.ts';
import { campaignAfterCrash, campaignPastSessionCap, voicemailUnderLoad, type TwilioWorld } from './campaigns.ts';

/**
 * The hostile developer, all at once (issue #35's findings; support/abuse/hostile-tenant.ts has each one and what
 * "contained" means): the backtracking pattern first, so it takes a test slot at once; then the key into the
 * victim's recording, three 9,000-letter words, the `file://` webhooks, the flood of long test runs and replays,
 * and long legal syntheses back to back until stopped.
 *
 * Findings 5–7 (benchmarks/abuse/campaigns.ts): a starter account's campaign past its session cap, a campaign whose
 * call dies with its realtime node (killed mid-call), and leave_message on a voicemail, all through the Twilio
 * doubles.
 */
export async function startAbuse(
  abuser: Tenant,
  opts: {
    victim: { developerId: string; key: string };
    callSid: string;
    synthLoops: number;
    synthChars: number;
    /** Leave out a load (to see what each costs the victim). */
    skip: Set<AbuseLoad>;
    /** Findings 5–7: the Twilio world, a starter account, the node to kill and a voicemail greeting. */
    campaigns: { world: TwilioWorld; starter: Tenant; node: { kill(): Promise<void> }; greeting: Buffer };
  },
): Promise<{ stop(): Promise<Outcome[]> }> {
  let stopped = false;
  const pattern = backtrackingPattern(abuser, { letters: 40, timeoutMs: 150_000 });
  // The pattern's run is asked for before the flood fills the developer's places.
  await waitFor(async () => (await openRuns(abuser)) >= 1, 10_000);
  const oneShots = Promise.all([traversalKey(abuser, opts.victim), unspeakableWord(abuser, 3), fileWebhook(abuser)]);
  const c = opts.campaigns;
  const campaigns = opts.skip.has('campaigns')
    ? null
    : Promise.all([
        failed('5', campaignPastSessionCap(c.world, c.starter)),
        failed('6', campaignAfterCrash(c.world, abuser, c.node)),
        failed('7', voicemailUnderLoad(c.world, abuser, c.greeting)),
      ]);
  const synthesis = opts.skip.has('synthesis')
    ? null
    : legalSynthesisLoad(abuser, { loops: opts.synthLoops, maxEach: 30, chars: opts.synthChars, stop: () => stopped });
  const flood = opts.skip.has('flood')
    ? null
    : await floodTestPool(abuser, { scenarios: longScenarios(), callSid: opts.callSid });
  // Measured once the flood's runs are under way (each starts its private platforms first).
  await waitFor(async () => {
    const states = await Promise.all((flood?.runIds ?? []).map((id) => runStatus(abuser, id)));
    return !flood || states.includes('running');
  }, 30_000);
  return {
    async stop() {
      stopped = true;
      const outcomes = [await pattern, ...(await oneShots)];
      if (synthesis) outcomes.push(await synthesis);
      if (flood) {
        const states = await Promise.all(flood.runIds.map((id) => runStatus(abuser, id)));
        outcomes.push({
          item: flood.item,
          title: flood.title,
          contained: flood.contained,
          detail: `${flood.detail}; the runs accepted were ${states.join(', ')} at the end`,
        });
      }
      if (campaigns) outcomes.push(...(await campaigns));
      return outcomes.sort((a, b) => a.item.localeCompare(b.item));
    },
  };
}

export type AbuseLoad = 'flood' | 'synthesis' | 'campaigns';

/** A reproduction that threw is reported as not contained, with why; each is told as it ends (a long run shows it). */
function failed(item: string, p: Promise<Outcome>): Promise<Outcome> {
  return p
    .catch((e: Error) => ({ item, title: 'the reproduction failed', contained: false, detail: e.message }))
    .then((o) => {
      console.error(`abuse: ${o.item}. ${o.contained ? 'contained' : 'NOT contained'}: ${o.detail}`);
      return o;
    });
}

async function runStatus(t: Tenant, id: string): Promise<string> {
  return String((await tenantRequest(t, `/v1/agent-tests/runs/${id}`)).body.status);
}

/** Three long scenarios a run: four turns each, 3 s of silence before each, a 20-second answer to each. */
function longScenarios(): unknown[] {
  return Array.from({ length: 3 }, (_, n) => ({
    name: `long ${n}`,
    llm: { replies: [LONG, LONG, LONG, LONG] },
    turns: UTTERANCES.map((u) => ({ say: u.replace(' | ', ' '), silenceBeforeMs: 3000 })),
  }));
}

async function openRuns(t: Tenant): Promise<number> {
  const { body } = await tenantRequest(t, `/v1/agents/${t.agentId}/tests`);
  const runs = (body.data ?? []) as Array<{ status: string }>;
  return runs.filter((r) => r.status === 'queued' || r.status === 'running').length;
}

async function waitFor(pred: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !(await pred())) await new Promise((r) => setTimeout(r, 250));
}
