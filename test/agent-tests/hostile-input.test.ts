import { request as httpRequest } from 'node:http';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScenarioFile, type Scenario } from '../../shared/contracts/agent-tests.ts';
import { MAX_PATTERN_TEXT_CHARS } from '../../shared/contracts/scenario-pattern.ts';
import { objectKey, unsafeKeyReason } from '../../shared/kernel/storage/keys.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue #35: what one tenant sends cannot freeze the platform (scenario patterns run on RE2, in linear time), read
 * another tenant's objects (keys are names, never paths, at every layer), point a webhook at a private address,
 * or get its own input echoed back in an error.
 */
let p: TestPlatform;
let keyA: string;
let devA: string;
let devB: string;
let agentId: string;
const privateAudio = Buffer.from('RIFF-private-call-audio-of-developer-B');

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

beforeAll(async () => {
  p = await startTestPlatform({
    roles: ['api'],
    env: { TWILIO_ACCOUNT_SID: 'AC00000000000000000000000000000035', TWILIO_AUTH_TOKEN: 'token-issue-35' },
  });
  ({ apiKey: keyA, developerId: devA } = await p.developer('pro'));
  ({ developerId: devB } = await p.developer('pro'));
  await p.infra.storage.put(`${devB}/recordings/ses_b.wav`, privateAudio, 'audio/wav');
  const r = await p.request('/v1/agents', {
    method: 'POST',
    key: keyA,
    json: { name: 'Front desk', systemPrompt: 'You answer the phone.', firstMessage: 'Hello.' },
  });
  agentId = ((await r.json()) as { id: string }).id;
}, 60_000);

afterAll(async () => {
  await p?.close();
});

const postRun = (json: unknown) => p.request(`/v1/agents/${agentId}/tests`, { method: 'POST', key: keyA, json });
const audioScenario = (key: string) => ({
  name: 'audio',
  llm: { replies: ['ok'] },
  turns: [{ audio: { key, transcript: 'hello' } }],
});

/** A pattern job on a thread of its own: a backtracking pattern would hold it for hours; this one must come back. */
function offThread(job: Json, limitMs: number): Promise<Json> {
  const worker = new Worker(new URL('./pattern-worker.ts', import.meta.url), {
    workerData: job,
    execArgv: ['--import', 'tsx'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`the pattern did not return within ${limitMs} ms`));
    }, limitMs);
    worker.once('message', (m: Json) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(m);
    });
    worker.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

const evaluateOffThread = (scenario: Scenario, reply: string, limitMs: number) =>
  offThread({ kind: 'evaluate', scenario, reply }, limitMs);

describe('scenario patterns (ReDoS)', () => {
  it('checks ^(a+)+$ against 10,000 and 20,000 letters and a `!`: linear time, the right answers', async () => {
    // With a backtracking engine each extra letter doubled the time: 30 letters took 25 s, 10,000 would take ages.
    const [scenario] = parseScenarioFile(
      JSON.stringify({
        name: 'redos',
        llm: { replies: ['x'] },
        turns: [{ say: 'hello', expect: { replyMatches: '^(a+)+$', replyNeverMatches: '(?i)^(A+)+$' } }],
        expect: { replyMatches: '^(a+)+$' },
      }),
    );
    for (const reply of [`${'a'.repeat(10_000)}!`, `${'a'.repeat(MAX_PATTERN_TEXT_CHARS - 1)}!`]) {
      const out = await evaluateOffThread(scenario!, reply, 60_000);
      const turn = out.turns[0] as { checks: { expectation: string; passed: boolean }[] };
      expect(turn.checks.map((c) => c.passed)).toEqual([false, true]);
      expect(out.checks[0]).toMatchObject({ expectation: 'expect.replyMatches ^(a+)+$', passed: false });
    }
    // Past the limit a pattern reads the first MAX_PATTERN_TEXT_CHARS characters only (here: letters, no `!`).
    const long = await evaluateOffThread(scenario!, `${'a'.repeat(100_000)}!`, 60_000);
    expect((long.turns[0] as { checks: { passed: boolean }[] }).checks.map((c) => c.passed)).toEqual([true, false]);
    // A reply the pattern does match is still seen as matching (and (?i) still folds case).
    const ok = await evaluateOffThread(scenario!, 'a'.repeat(5000), 60_000);
    expect((ok.turns[0] as { checks: { passed: boolean }[] }).checks.map((c) => c.passed)).toEqual([true, false]);
  }, 150_000);

  it("checks a tool's arguments against a pattern safe-regex lets through, ^(\\w|\\d)*$, in linear time", async () => {
    const schema = { type: 'object', properties: { code: { type: 'string', pattern: '^(\\w|\\d)*$' } } };
    const bad = await offThread({ kind: 'toolArguments', schema, args: { code: `${'1'.repeat(10_000)}!` } }, 60_000);
    expect(bad.problem).toMatch(/code must match pattern/);
    const good = await offThread({ kind: 'toolArguments', schema, args: { code: '1'.repeat(10_000) } }, 60_000);
    expect(good.problem).toBeNull();
  }, 150_000);

  it('refuses a pattern RE2 cannot run, or a too-long one, with a 400 that does not quote it', async () => {
    for (const pattern of ['(a)\\1', '(?=secret-lookahead)x', `${'a'.repeat(600)}`]) {
      const r = await postRun({
        scenarios: [{ name: 'x', turns: [{ say: 'hi', expect: { replyMatches: pattern } }] }],
      });
      expect(r.status, pattern).toBe(400);
      const body = (await r.json()) as Json;
      expect(body.error.code).toBe('validation_failed');
      expect(body.error.message).toMatch(/turns\.0\.expect\.replyMatches/);
      expect(body.error.message).toMatch(/RE2 syntax|at most 512/);
      expect(body.error.message).not.toContain('secret-lookahead');
      expect(body.error.message).not.toContain('aaaaaaaaaa');
    }
    // The same through a scenario file's text.
    const file = await postRun({ scenarios: 'name: x\nturns: [{say: hi, expect: {replyNeverMatches: "(?<!b)a"}}]' });
    expect(file.status).toBe(400);
  });
});

describe('object keys are names, never paths', () => {
  it('refuses a traversal key at scenario creation, and the embedded S3 refuses it whoever asks', async () => {
    const traversal = `${devA}/../${devB}/recordings/ses_b.wav`;
    for (const key of [traversal, `${devA}/%2e%2e/${devB}/recordings/ses_b.wav`, `${devA}//x.wav`, `${devA}\\x`]) {
      const r = await postRun({ scenarios: [audioScenario(key)] });
      expect(r.status, key).toBe(400);
      const body = (await r.json()) as Json;
      expect(body.error.message).toMatch(/not an object key/);
      expect(body.error.message).not.toContain(devB);
    }
    // The storage layer refuses it for every caller, before any request goes out.
    await expect(p.infra.storage.getBuffer(traversal)).rejects.toMatchObject({ name: 'UnsafeObjectKeyError' });
    await expect(p.infra.storage.exists(traversal)).rejects.toMatchObject({ name: 'UnsafeObjectKeyError' });
    // And the embedded S3 itself, sent raw (a fetch() would resolve the dots before sending).
    const endpoint = new URL(p.infra.embeddedS3!.endpoint);
    for (const path of [
      `/${p.infra.storage.bucket}/${traversal}`,
      `/${p.infra.storage.bucket}/${devA}/%2e%2e/${devB}/recordings/ses_b.wav`,
      `/${p.infra.storage.bucket}/../../../etc/passwd`,
    ]) {
      const { status, body } = await rawGet(endpoint, path);
      expect(status, path).toBe(400);
      expect(body).toContain('XMinioInvalidObjectName');
      expect(body).not.toContain(privateAudio.toString());
    }
    // B's object is there all along, under its own key.
    expect(await p.infra.storage.getBuffer(`${devB}/recordings/ses_b.wav`)).toEqual(privateAudio);
  });

  it('answers "not yours" and "not there" alike', async () => {
    const answer = async (key: string) => {
      const r = await postRun({ scenarios: [audioScenario(key)] });
      const body = (await r.json()) as Json;
      return { status: r.status, code: body.error.code, message: body.error.message, param: body.error.param };
    };
    const notYours = await answer(`${devB}/recordings/ses_b.wav`);
    const notThere = await answer(`${devA}/recordings/ses_b.wav`);
    expect(notYours.status).toBe(400);
    expect(notYours).toEqual(notThere);
    expect(notYours.message).toMatch(/no object with that key in your storage/);
    // A key of A's own that exists is accepted (the run is queued).
    await p.infra.storage.put(`${devA}/uploads/leg.wav`, privateAudio, 'audio/wav');
    expect((await postRun({ scenarios: [audioScenario(`${devA}/uploads/leg.wav`)] })).status).toBe(202);
  });

  it('reads audio at run time the same way: one error for not yours, not there and a path', async () => {
    // A run stored before these checks (or whose object went since) meets the same rules when it plays the turn.
    const { restAudioLoader } = await import('../../shared/domains/agent-tests/execute.ts');
    const load = restAudioLoader(p.infra, devA);
    const why = (key: string) =>
      load({ key, format: 'wav' }).then(
        () => 'read',
        (e: Error) => e.message,
      );
    const answers = await Promise.all([
      why(`${devB}/recordings/ses_b.wav`),
      why(`${devA}/recordings/ses_b.wav`),
      why(`${devA}/../${devB}/recordings/ses_b.wav`),
    ]);
    expect(new Set(answers).size).toBe(1);
    expect(answers[0]).toBe(
      'audio.key: no object with that key in your storage (a key starts with your developer id, like a call recording of yours)',
    );
  });

  it('keeps generated keys plain names', () => {
    expect(objectKey('dev_1', 'uploads', '..', '', 'a/b', '.')).toBe('dev_1/uploads/__/_/a_b/_');
    expect(unsafeKeyReason(objectKey('dev_1', 'recordings', 'ses_1.wav'))).toBeNull();
    for (const bad of ['', 'a/./b', 'a/../b', '/a', 'a/', 'a\\b', 'a%2fb', 'a\u0000b'])
      expect(unsafeKeyReason(bad), JSON.stringify(bad)).not.toBeNull();
  });
});

describe('webhookUrl is checked when the run or campaign is created', () => {
  const campaign = (webhookUrl: string) => ({
    agentId,
    from: '+15550001000',
    recipients: [{ phone: '+15550002000' }],
    webhookUrl,
  });
  for (const url of [
    'file:///etc/passwd',
    'http://10.0.0.7/hooks',
    'http://127.0.0.1:9/hooks',
    'ftp://example.com/x',
  ]) {
    it(`refuses ${url}`, async () => {
      const run = await postRun({ scenarios: [{ name: 'x', turns: [{ say: 'hi' }] }], webhookUrl: url });
      const camp = await p.request('/v1/campaigns', { method: 'POST', key: keyA, json: campaign(url) });
      for (const r of [run, camp]) {
        expect(r.status).toBe(400);
        const body = (await r.json()) as Json;
        expect(['invalid_url', 'url_not_allowed']).toContain(body.error.code);
        expect(body.error.param).toBe('webhookUrl');
      }
    });
  }
});

describe('errors do not echo the input', () => {
  it('an unknown id, a path, a JSON body and a scenario file are not repeated back', async () => {
    const weird = 'x'.repeat(50) + '<script>';
    const run = await p.request(`/v1/agent-tests/runs/${encodeURIComponent(weird)}`, { key: keyA });
    expect(run.status).toBe(404);
    expect(((await run.json()) as Json).error.message).toBe('No agent test run with that id.');
    // A well-formed id is named: the caller needs it.
    const plain = await p.request('/v1/agent-tests/runs/atr_missing1', { key: keyA });
    expect(((await plain.json()) as Json).error.message).toBe('No agent test run with id "atr_missing1".');

    const route = await p.request(`/v1/nothing-here/${encodeURIComponent('"><img src=x>')}`, { key: keyA });
    expect(route.status).toBe(404);
    expect(((await route.json()) as Json).error.message).not.toContain('img');

    const json = await p.request('/v1/agents', {
      method: 'POST',
      key: keyA,
      headers: { 'content-type': 'application/json' },
      body: '{"name": secret-body-text}',
    });
    expect(json.status).toBe(400);
    expect(((await json.json()) as Json).error.message).not.toContain('secret-body-text');

    const yaml = await postRun({ scenarios: 'name: x: secret-yaml-text\nturns: []' });
    expect(yaml.status).toBe(400);
    const yamlMessage = ((await yaml.json()) as Json).error.message as string;
    expect(yamlMessage).toMatch(/not YAML or JSON/);
    expect(yamlMessage).not.toContain('secret-yaml-text');
  });
});

function rawGet(endpoint: URL, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: endpoint.hostname, port: endpoint.port, path, method: 'GET' }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}
