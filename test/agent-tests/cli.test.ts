import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

const run = promisify(execFile);

/**
 * `npm run cli -- agents test` as CI runs it: its own process, the deployment's database (here a test one), the
 * platform roles started inside it with the offline vendors. Exit 2 on a bad file before any call; exit 1 and a
 * JUnit report naming the failed expectation when the agent breaks a scenario.
 */
let p: TestPlatform;
let dir: string;
let agentId: string;

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  const { apiKey } = await p.developer('pro');
  // The agent names its LLM: on a platform with no vendor key the default is the local reply engine, and the
  // runner's scripted LLM speaks OpenAI's protocol.
  const r = await p.request('/v1/agents', {
    method: 'POST',
    key: apiKey,
    json: {
      name: 'Front desk',
      firstMessage: 'Hello, thanks for calling.',
      llmProvider: 'openai',
      llmModel: 'gpt-4o-mini',
    },
  });
  agentId = ((await r.json()) as { id: string }).id;
  dir = await mkdtemp(join(tmpdir(), 'agent-tests-cli-'));
}, 60_000);

afterAll(async () => {
  await p?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, ['--import', 'tsx', 'scripts/cli.ts', 'agents', 'test', ...args], {
    env: {
      ...process.env,
      DATABASE_URL: p.config.DATABASE_URL,
      REDIS_PREFIX: p.config.REDIS_PREFIX,
      S3_EMBEDDED_DIR: join(dir, 's3'),
      S3_EMBEDDED_PORT: '0',
      PUBLIC_BASE_URL: 'https://voice.example.com',
      REALTIME_SESSION_SECRET: 'test-secret-test-secret-test-secret-42',
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      LOG_LEVEL: 'silent',
    },
    timeout: 150_000,
  }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

describe('agents test CLI', () => {
  it('exits 2 naming the bad field, before any call', async () => {
    const file = join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ name: 'x', turns: [{ say: 'hi', expect: { replyMatches: '(?i)[' } }] }));
    const r = await cli([agentId, file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/bad\.json: turns\.0\.expect\.replyMatches: not a valid pattern/);
  }, 60_000);

  it('exits 1 with a JUnit report when the agent mentions prices', async () => {
    const file = join(dir, 'prices.yaml');
    await writeFile(
      file,
      [
        'name: never talks about prices',
        'llm: {replies: ["Our prices start at ninety dollars."]}',
        'turns: [{say: "Can I book a cleaning?"}]',
        'expect: {replyNeverMatches: "(?i)price"}',
      ].join('\n'),
    );
    const junit = join(dir, 'junit.xml');
    const r = await cli([agentId, file, '--junit', junit]);
    expect(r.stderr).toMatch(/FAIL .*never talks about prices/);
    expect(r.code).toBe(1);
    const line = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { passed: boolean; llm: string };
    expect(line).toMatchObject({ passed: false, llm: expect.stringMatching(/scripted/) });
    const xml = await readFile(junit, 'utf8');
    expect(xml).toMatch(/failures="1"/);
    expect(xml).toMatch(/<failure message="expect\.replyNeverMatches \(\?i\)price: the agent said &quot;price&quot;/);
  }, 180_000);
});
