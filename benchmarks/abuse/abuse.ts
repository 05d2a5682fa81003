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

/**
 * The hostile developer, all at once (issue #35's findings; support/abuse/hostile-tenant.ts has each one and what
 * "contained" means): the backtracking pattern first, so it takes a test slot at once; then the key into the
 * victim's recording, three 9,000-letter words, the `file://` webhooks, the flood of long test runs and replays,
 * and long legal syntheses back to back until stopped.
 *
 * Findings 5–7 are another branch's work and not reproduced here yet:
 * TODO(issue #35 items 5–7): 5. a campaign of a starter account with maxConcurrency 10 (above its session cap of 5)
 * through the Twilio REST double and twilioVoice (test/campaigns/harness.ts shows the wiring); 6. the realtime role
 * killed mid-campaign, slots freed within a minute of the restart; 7. leave_message on a voicemail under this load.
 * Each replaces its NOT_REPRODUCED entry below once main has the fixes, as an Outcome like the others.
 */
export async function startAbuse(
  abuser: Tenant,
  opts: {
    victim: { developerId: string; key: string };
    callSid: string;
    synthLoops: number;
    synthChars: number;
    /** Leave out the flood of test runs or the legal synthesis load (to see what each costs the victim). */
    skip: Set<'flood' | 'synthesis'>;
  },
): Promise<{ stop(): Promise<Outcome[]> }> {
  let stopped = false;
  const pattern = backtrackingPattern(abuser, { letters: 40, timeoutMs: 150_000 });
  // The pattern's run is asked for before the flood fills the developer's places.
  await waitFor(async () => (await openRuns(abuser)) >= 1, 10_000);
  const oneShots = Promise.all([traversalKey(abuser, opts.victim), unspeakableWord(abuser, 3), fileWebhook(abuser)]);
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
      return [...outcomes, ...NOT_REPRODUCED].sort((a, b) => a.item.localeCompare(b.item));
    },
  };
}

const NOT_REPRODUCED: Outcome[] = [
  { item: '5', title: 'a campaign past the session cap', contained: null, detail: 'TODO (another branch)' },
  { item: '6', title: 'a campaign after a crash', contained: null, detail: 'TODO (another branch)' },
  { item: '7', title: 'leave_message under load', contained: null, detail: 'TODO (another branch)' },
];

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
