import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../lib/free-port.ts';
import { performance } from 'node:perf_hooks';
import { silence, tone } from '../../support/doubles/audio.ts';
import { startTwilioRestDouble, type TwilioRestDouble } from '../../support/doubles/twilio-rest.ts';
import {
  peakConcurrentCalls,
  twilioVoice,
  type CalleeScript,
  type TwilioVoice,
} from '../../support/doubles/twilio-voice.ts';
import { tenantRequest, type Outcome, type Tenant } from '../../support/abuse/hostile-tenant.ts';

/**
 * Issue #35's campaign findings (5–7) as test:abuse runs them beside the others: Twilio at the platform's boundary
 * (the REST double places calls that `twilioVoice` plays end to end over the real media stream), and a second
 * api + realtime process that a campaign's call is routed to and that is killed mid-call (finding 6).
 */

export const TWILIO = { accountSid: 'AC00000000000000000000000000000035', authToken: 'token-issue-35' };
const PUBLIC = 'https://voice.example.com';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API bodies read field by field
type Json = Record<string, any>;

export interface TwilioWorld {
  rest: TwilioRestDouble;
  /** Calls answered by the platform under measurement. */
  main: TwilioVoice;
  /** Calls to `doomedPhones`: their callbacks and stream go to the node that is killed. */
  doomed: TwilioVoice;
  doomedPhones: Set<string>;
  /** What each number does when called (default: a person who listens to the greeting and hangs up). */
  scripts: Map<string, CalleeScript>;
  /** Where the public address resolves: the platform's, and the doomed node's. */
  urls: { main: string; doomed: string };
  close(): Promise<void>;
}

export async function startTwilioWorld(): Promise<TwilioWorld> {
  const urls = { main: '', doomed: '' };
  const scripts = new Map<string, CalleeScript>();
  const voice = (to: () => string) =>
    twilioVoice({
      ...TWILIO,
      resolve: (u) => u.replace(PUBLIC, to()).replace('wss://voice.example.com', to().replace(/^http/, 'ws')),
      script: (phone) => scripts.get(phone) ?? { answer: 'human' },
    });
  const main = voice(() => urls.main);
  const doomed = voice(() => urls.doomed);
  const doomedPhones = new Set<string>();
  const rest = await startTwilioRestDouble({
    ...TWILIO,
    onCall: (c) => (doomedPhones.has(c.form.get('To') ?? '') ? doomed : main).onCall(c),
  });
  rest.onUpdate = (u) => {
    main.onUpdate(u);
    doomed.onUpdate(u);
  };
  return {
    rest,
    main,
    doomed,
    doomedPhones,
    scripts,
    urls,
    async close() {
      await Promise.race([Promise.all([main.idle(), doomed.idle()]), new Promise((r) => setTimeout(r, 10_000))]);
      await rest.close();
    },
  };
}

/** The platform env that points Twilio at the doubles (and the public address they resolve). */
export function twilioEnv(rest: TwilioRestDouble): Record<string, string> {
  return {
    PUBLIC_BASE_URL: PUBLIC,
    TWILIO_ACCOUNT_SID: TWILIO.accountSid,
    TWILIO_AUTH_TOKEN: TWILIO.authToken,
    TWILIO_API_BASE_URL: rest.url,
  };
}

/**
 * A second api + realtime process of the same platform (its database, Redis prefix and embedded S3), as a
 * realtime node of the fleet; `kill()` is a crash (SIGKILL: no drain, no session ended).
 */
export async function startDoomedNode(env: Record<string, string>): Promise<{ url: string; kill(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts', 'api,realtime'], {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', PROCESSES: '1', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (!(await fetch(`${url}/healthz`).catch(() => null))?.ok) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the second realtime node did not start (exit ${child.exitCode})`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}

async function createCampaign(t: Tenant, json: Json): Promise<string> {
  const res = await tenantRequest(t, '/v1/campaigns', { json });
  if (res.status !== 201) throw new Error(`POST /v1/campaigns answered ${res.status}: ${res.text}`);
  return res.body.id as string;
}

/** The campaign once `done(detail)` holds, or its last detail when `timeoutMs` passed. */
async function campaignWhen(t: Tenant, id: string, done: (d: Json) => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let d: Json = {};
  while (Date.now() < deadline) {
    d = (await tenantRequest(t, `/v1/campaigns/${id}`)).body;
    if (done(d)) return { d, done: true };
    await new Promise((r) => setTimeout(r, 500));
  }
  return { d, done: false };
}

const completed = (d: Json) => d.status === 'completed';

/**
 * 5. A starter account (5 sessions at once) with a campaign of maxConcurrency 10 and `n` recipients. Contained when
 * every recipient is answered, dialled once, never more than 5 at once, none "answered into silence".
 */
export async function campaignPastSessionCap(w: TwilioWorld, starter: Tenant, n = 8): Promise<Outcome> {
  const title = `a starter account's campaign of maxConcurrency 10 (session cap 5), ${n} recipients`;
  const phones = Array.from({ length: n }, (_, i) => `+1555061${String(i).padStart(4, '0')}`);
  const id = await createCampaign(starter, {
    agentId: starter.agentId,
    from: '+15550009999',
    maxConcurrency: 10,
    recipients: phones.map((phone) => ({ phone })),
    retry: { maxAttempts: 2, backoff: 0 },
  });
  const { d, done } = await campaignWhen(starter, id, completed, 180_000);
  const runs = w.main.runs.filter((r) => phones.includes(r.to));
  const peak = peakConcurrentCalls(runs);
  const outcomes = ((d.recipients ?? []) as Json[]).map((r) => r.outcome ?? r.state);
  const silent = ((d.recipients ?? []) as Json[])
    .flatMap((r) => (r.attempts ?? []) as Json[])
    .filter((a) => /never connected/.test(String(a.error ?? ''))).length;
  const answered = outcomes.filter((o) => o === 'answered').length;
  const refused = runs.filter((r) => r.twiml !== null && !/<Connect><Stream/.test(r.twiml)).length;
  return {
    item: '5',
    title,
    contained: done && answered === n && runs.length === n && peak <= 5 && silent === 0,
    detail:
      `${done ? 'completed' : 'not completed in 180 s'}: ${answered} of ${n} answered, ${runs.length} dialled, at most ` +
      `${peak} at once, ${silent} "media stream never connected", ${refused} refused at answer`,
  };
}

/**
 * 6. A campaign (maxConcurrency 1, two recipients) whose first call runs on a realtime node that is killed once
 * the callee has heard the greeting: its final status callback reaches no one. Contained when the attempt is
 * looked up at Twilio and settled, and the second recipient is dialled within 75 s of the kill (not after the
 * hour the old reconciler waited).
 */
export async function campaignAfterCrash(w: TwilioWorld, t: Tenant, node: { kill(): Promise<void> }): Promise<Outcome> {
  const title = 'a campaign whose call dies with its realtime node (SIGKILL mid-call)';
  const [dying, next] = ['+15550710001', '+15550710002'];
  w.doomedPhones.add(dying);
  let greeted: () => void = () => {};
  const heard = new Promise<void>((r) => (greeted = r));
  w.scripts.set(dying, {
    answer: 'human',
    talk: async (c) => {
      await c.until(() => c.marksEchoed.length > 0 && !c.playing, 60_000);
      greeted();
      await c.closed;
    },
  });
  const id = await createCampaign(t, {
    agentId: t.agentId,
    from: '+15550009999',
    maxConcurrency: 1,
    recipients: [{ phone: dying }, { phone: next }],
    retry: { maxAttempts: 1, backoff: 0 },
  });
  const inTime = await Promise.race([heard.then(() => true), new Promise((r) => setTimeout(() => r(false), 90_000))]);
  if (!inTime) return { item: '6', title, contained: false, detail: 'the first call was not up within 90 s' };
  await node.kill();
  const killedAt = performance.now();
  const { d, done } = await campaignWhen(t, id, completed, 150_000);
  const second = w.main.runs.find((r) => r.to === next);
  const freedS = second ? (second.startedAt - killedAt) / 1000 : Number.POSITIVE_INFINITY;
  const first = ((d.recipients ?? []) as Json[])[0]?.attempts?.[0] as Json | undefined;
  return {
    item: '6',
    title,
    contained: done && freedS < 75,
    detail:
      `${done ? 'completed' : 'not completed within 150 s of the kill'}; the dead call settled ` +
      `${first?.status ?? '?'}; the next recipient dialled ${second ? `${freedS.toFixed(1)} s` : 'never'} after the kill`,
  };
}

/** The voicemail agent's message (finding 7). */
export const VOICEMAIL_MESSAGE = 'Hi, this is the clinic. Please call us back.';

/**
 * 7. A campaign call answered by a voicemail (a greeting, the beep, then 15 s of recording before it hangs up) for
 * an agent that leaves a message, under the rest of the abuse. Contained when the message is left (the attempt's
 * outcome `voicemail_left`, the message spoken) in one attempt.
 */
export async function voicemailUnderLoad(w: TwilioWorld, t: Tenant, greeting: Buffer): Promise<Outcome> {
  const title = 'leave_message on a voicemail, under the rest of the load';
  const phone = '+15550720001';
  w.scripts.set(phone, {
    answer: 'machine',
    talk: async (c) => {
      await c.say(Buffer.concat([greeting, silence(8000, 0.4)]));
      await c.say(Buffer.concat([tone(8000, 0.5, 1000, 9000), silence(8000, 1)]));
      await Promise.race([c.closed, new Promise((r) => setTimeout(r, 15_000))]);
    },
  });
  const agent = await tenantRequest(t, '/v1/agents', {
    json: {
      name: 'Recall',
      firstMessage: 'Hello, this is the clinic.',
      llmModel: 'gpt-4o-mini',
      voicemail: { action: 'leave_message', message: VOICEMAIL_MESSAGE },
    },
  });
  if (agent.status !== 201) throw new Error(`creating the voicemail agent answered ${agent.status}: ${agent.text}`);
  const id = await createCampaign(t, {
    agentId: agent.body.id,
    from: '+15550009999',
    recipients: [{ phone }],
    retry: { maxAttempts: 1, backoff: 0 },
  });
  const { d, done } = await campaignWhen(t, id, (x) => x.recipients?.[0]?.state === 'done', 120_000);
  const r = (d.recipients?.[0] ?? {}) as Json;
  const attempt = (r.attempts?.[0] ?? {}) as Json;
  let spoken: string[] = [];
  if (attempt.sessionId) {
    const s = await tenantRequest(t, `/v1/observability/sessions/${attempt.sessionId}`);
    spoken = ((s.body.turns ?? []) as Json[]).filter((x) => x.speaker === 'assistant').map((x) => String(x.text));
  }
  const left = r.outcome === 'voicemail_left' && spoken.includes(VOICEMAIL_MESSAGE);
  return {
    item: '7',
    title,
    contained: done && left && (r.attempts?.length ?? 0) === 1,
    detail:
      `${done ? '' : 'not settled within 120 s; '}outcome ${r.outcome ?? '-'}, end ${attempt.endReason ?? '-'}, ` +
      `${r.attempts?.length ?? 0} attempt(s), the agent said ${JSON.stringify(spoken)}`,
  };
}
