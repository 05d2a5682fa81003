/**
 * Issue #35's reproductions of what one tenant could send to hurt the others, each bounded in count and time and
 * aimed at loopback only, with what "contained" means for each. test/resilience/hostile-tenant.test.ts asserts the
 * outcomes on one platform; benchmarks/abuse runs them together while another developer's call and requests are
 * measured.
 */

/** A developer as the reproductions use it: its key and an agent of its own. */
export interface Tenant {
  url: string;
  apiKey: string;
  developerId: string;
  agentId: string;
}

export interface Outcome {
  /** The finding, "1" to "8". */
  item: string;
  title: string;
  /** Refused or done in bounded time with the right answer; null when the reproduction was not run. */
  contained: boolean | null;
  detail: string;
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Answer {
  status: number;
  body: Json;
  text: string;
  ms: number;
}

/**
 * One request of the tenant's, its body read whole (an audio answer as bytes, counted, never parsed); a body cut
 * after the headers (a stream that failed midway) is status 0.
 */
export async function tenantRequest(
  t: Tenant,
  path: string,
  init: { method?: string; json?: unknown; body?: FormData | string; signal?: AbortSignal } = {},
): Promise<Answer> {
  const t0 = performance.now();
  const res = await fetch(t.url + path, {
    method: init.method ?? (init.json === undefined && init.body === undefined ? 'GET' : 'POST'),
    headers: {
      authorization: `Bearer ${t.apiKey}`,
      ...(init.json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.json === undefined ? init.body : JSON.stringify(init.json),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  const isJson = res.headers.get('content-type')?.includes('json') ?? false;
  let raw: Buffer;
  try {
    raw = Buffer.from(await res.arrayBuffer());
  } catch (e) {
    // A stream that failed after its headers is cut: told apart from any status as 0.
    return {
      status: 0,
      body: {},
      text: `cut after ${res.status}: ${(e as Error).message}`,
      ms: performance.now() - t0,
    };
  }
  const text = isJson ? raw.toString('utf8') : '';
  return { status: res.status, body: isJson ? (JSON.parse(text) as Json) : {}, text, ms: performance.now() - t0 };
}

const postRun = (t: Tenant, json: unknown) =>
  tenantRequest(t, `/v1/agents/${t.agentId}/tests`, { method: 'POST', json });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A run once it has ended (passed, failed, error), or null when it had not within `timeoutMs`. */
export async function endedRun(t: Tenant, runId: string, timeoutMs: number): Promise<Json | null> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { body } = await tenantRequest(t, `/v1/agent-tests/runs/${runId}`);
    if (body.status && body.status !== 'queued' && body.status !== 'running') return body;
    await sleep(250);
  }
  return null;
}

/**
 * 1. A scenario whose `replyMatches` is `^(a+)+$` against a reply of `letters` a's and a `!`: with a backtracking
 * engine each letter doubled the time (28 letters froze the platform for 25 s). Contained when refused at creation,
 * or when the run ends with that check failed (the reply does not match) — evaluated, in bounded time.
 */
export async function backtrackingPattern(
  t: Tenant,
  opts: { letters?: number; timeoutMs?: number } = {},
): Promise<Outcome> {
  const title = 'replyMatches ^(a+)+$ against a…a!';
  const created = await postRun(t, {
    scenarios: [
      {
        name: 'backtracking pattern',
        llm: { replies: [`${'a'.repeat(opts.letters ?? 40)}!`] },
        turns: [{ say: 'Hello there.', expect: { replyMatches: '^(a+)+$' } }],
      },
    ],
  });
  if (created.status === 400) return { item: '1', title, contained: true, detail: 'refused at creation (400)' };
  if (created.status !== 202)
    return { item: '1', title, contained: false, detail: `creation answered ${created.status}` };
  const t0 = performance.now();
  const run = await endedRun(t, created.body.id as string, opts.timeoutMs ?? 120_000);
  const s = ((performance.now() - t0) / 1000).toFixed(1);
  if (!run) return { item: '1', title, contained: false, detail: `the run had not ended after ${s} s` };
  const check = (run.results as Json[] | undefined)?.[0]?.turns?.[0]?.checks?.[0] as Json | undefined;
  const evaluated = run.status === 'failed' && check?.passed === false && /replyMatches/.test(check.expectation);
  return {
    item: '1',
    title,
    contained: evaluated,
    detail: evaluated
      ? `evaluated (RE2): the run failed on that check, as it should, ${s} s after it was queued`
      : `the run ended ${run.status} (${run.error ?? 'no error'}); check ${JSON.stringify(check ?? null)}`,
  };
}

/**
 * 2. A test run whose `audio.key` climbs out of the developer's prefix into another tenant's recording. Contained
 * when every form (the dots, percent-encoded dots, the other tenant's key itself) is refused, the answer for the
 * other tenant's key is the one for a key that is not there, and no answer carries its id or its bytes.
 */
export async function traversalKey(t: Tenant, victim: { developerId: string; key: string }): Promise<Outcome> {
  const title = 'audio.key <A>/../<B>/recordings/…';
  const rest = victim.key.slice(victim.developerId.length);
  const keys = [
    `${t.developerId}/../${victim.key}`,
    `${t.developerId}/%2e%2e/${victim.key}`,
    `${t.developerId}/recordings/../../${victim.key}`,
    victim.key,
    `${t.developerId}${rest}`,
  ];
  const answers = await Promise.all(
    keys.map((key) =>
      postRun(t, {
        scenarios: [{ name: 'audio', llm: { replies: ['ok'] }, turns: [{ audio: { key, transcript: 'hello' } }] }],
      }),
    ),
  );
  const statuses = answers.map((a) => a.status);
  const leaked = answers.filter((a) => a.text.includes(victim.developerId) || a.text.includes('RIFF'));
  // Told apart by nothing but the request's own id.
  const said = (a: Answer) => JSON.stringify([a.body.error?.code, a.body.error?.message, a.body.error?.param]);
  const alike = said(answers[3]!) === said(answers[4]!);
  const contained = statuses.every((s) => s === 400) && leaked.length === 0 && alike;
  return {
    item: '2',
    title,
    contained,
    detail:
      `${keys.length} keys answered ${statuses.join(', ')}; ` +
      `${leaked.length} answers named the other tenant or carried audio; ` +
      `"not yours" ${alike ? 'answered as' : 'told apart from'} "not there"`,
  };
}

/** A word no voice can say: flite spelled it out for minutes (issue #35 item 3). */
export const UNSPEAKABLE_WORD = 'a'.repeat(9000);

/**
 * 3. `concurrent` synthesis requests of one 9,000-letter word at once. Contained when each is refused (400) without
 * the word in the answer.
 */
export async function unspeakableWord(t: Tenant, concurrent = 3): Promise<Outcome> {
  const answers = await Promise.all(
    Array.from({ length: concurrent }, () => tenantRequest(t, '/v1/synthesize', { json: { text: UNSPEAKABLE_WORD } })),
  );
  const refused = answers.filter((a) => a.status === 400 && !a.text.includes('aaaaaaaaaa')).length;
  return {
    item: '3',
    title: `${concurrent} × POST /v1/synthesize, one 9,000-letter word`,
    contained: refused === concurrent,
    detail: `${refused} of ${concurrent} refused with 400 (slowest answer ${Math.round(Math.max(...answers.map((a) => a.ms)))} ms)`,
  };
}

/** Long but legal text: four-digit numbers, the slowest thing flite says (about 1 s of CPU per 280 characters). */
export function numbersText(chars: number): string {
  const words: string[] = [];
  for (let i = 0; words.join(' ').length < chars; i++) words.push(String(4321 + i * 7));
  return words.join(' ');
}

/**
 * 3 (load). `loops` clients each synthesizing long, legal numbers text in the slowest local voice, one request
 * after another, until `stop()` or `maxEach` requests each. Contained when every answer is audio (200) or a refusal
 * at the CPU deadline (400 synthesis_too_costly): never a 5xx or a timeout.
 */
export async function legalSynthesisLoad(
  t: Tenant,
  opts: { loops: number; maxEach: number; chars: number; stop: () => boolean },
): Promise<Outcome> {
  const statuses = new Map<string, number>();
  const text = numbersText(opts.chars);
  const loop = async () => {
    for (let n = 0; n < opts.maxEach && !opts.stop(); n++) {
      const a = await tenantRequest(t, '/v1/synthesize', { json: { text, voiceId: 'flite-slt', format: 'wav' } });
      const kind = a.status === 400 ? `400 ${a.body.error?.code}` : a.status === 0 ? 'cut midway' : String(a.status);
      statuses.set(kind, (statuses.get(kind) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: opts.loops }, loop));
  const ok = [...statuses.keys()].every((k) => k === '200' || k === '400 synthesis_too_costly');
  return {
    item: '3',
    title: `${opts.loops} clients synthesizing ${text.length} characters of numbers, back to back`,
    contained: ok,
    detail: [...statuses].map(([k, n]) => `${n} × ${k}`).join(', ') || 'none sent',
  };
}

/**
 * 4. The developer floods the test pool: a replay of one of its calls (when `callSid` is given), then runs of
 * `scenarios` until the per-developer limit answers, then one more replay. Contained when the limit answers 429
 * `test_runs_in_flight_limited` within `maxRequests` (replays included). Returns the runs accepted, to wait on.
 */
export async function floodTestPool(
  t: Tenant,
  opts: { scenarios: unknown[]; callSid?: string; maxRequests?: number },
): Promise<Outcome & { runIds: string[] }> {
  const runIds: string[] = [];
  const seen: string[] = [];
  const replay = async () => {
    const a = await tenantRequest(t, `/v1/calls/${opts.callSid}/replay`, { json: {} });
    seen.push(`replay ${a.status}`);
    return a;
  };
  if (opts.callSid) await replay();
  let limited: Answer | null = null;
  for (let n = 0; n < (opts.maxRequests ?? 20) && !limited; n++) {
    const a = await postRun(t, { scenarios: opts.scenarios });
    seen.push(`run ${a.status}`);
    if (a.status === 202) runIds.push(a.body.id as string);
    else if (a.status === 429) limited = a;
    else break;
  }
  const replayLimited = opts.callSid ? (await replay()).status === 429 : true;
  const contained = limited?.body.error?.code === 'test_runs_in_flight_limited' && replayLimited;
  return {
    item: '4',
    title: 'test runs and replays until the per-developer limit',
    contained,
    detail: seen.join(', '),
    runIds,
  };
}

/**
 * 8. A `webhookUrl` of `file:///etc/passwd` on a test run and on a campaign. Contained when both are refused at
 * creation (400 on `webhookUrl`).
 */
export async function fileWebhook(t: Tenant): Promise<Outcome> {
  const url = 'file:///etc/passwd';
  const run = await postRun(t, { scenarios: [{ name: 'x', turns: [{ say: 'hi' }] }], webhookUrl: url });
  const campaign = await tenantRequest(t, '/v1/campaigns', {
    json: { agentId: t.agentId, from: '+15550001000', recipients: [{ phone: '+15550002000' }], webhookUrl: url },
  });
  const refused = [run, campaign].filter((a) => a.status === 400 && a.body.error?.param === 'webhookUrl').length;
  return {
    item: '8',
    title: 'webhookUrl file:///etc/passwd on a test run and a campaign',
    contained: refused === 2,
    detail: `test run ${run.status}, campaign ${campaign.status}`,
  };
}
