import { readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { agentOwner } from '../shared/domains/agents/db.ts';
import { mintKey } from '../shared/platform/auth/mint-key.ts';
import { ScenarioFileError, type TurnAudio } from '../shared/contracts/agent-tests.ts';
import { loadConfig } from '../shared/kernel/config/index.ts';
import { revokeKey } from '../shared/kernel/db/api-keys.ts';
import { migrate } from '../shared/kernel/db/migrate.ts';
import { createDb } from '../shared/kernel/db/pool.ts';
import { createLogger } from '../shared/kernel/observability/logger.ts';
import { junitXml } from '../shared/domains/agent-tests/junit.ts';
import { agentLlmProvider, PlatformSlot } from '../shared/domains/agent-tests/platform-slot.ts';
import { describeResult, loadScenarioFiles, runSuite } from '../shared/domains/agent-tests/suite.ts';
import { startPlatform } from './platform.ts';

export const AGENT_TESTS_USAGE = `  npm run cli -- agents test <agentId> <files…> [--junit FILE]
      runs scenario files (YAML or JSON, docs/agent-tests.md) against the agent as configured: the api and realtime
      roles start in this process on a free port with the deployment's database, Redis and storage, a simulated STT
      and a scripted LLM (llm.replies) — offline; a scenario without llm.replies runs on the agent's own LLM (a
      vendor's at real cost, metered as test traffic); prints one JSON line per scenario, a summary on stderr; exit
      0 only when every expectation holds (1 when one fails, 2 on bad input)`;

/**
 * `agents test`: validates every file first (a bad one exits 2 before any call), then runs each scenario as a
 * phone call through the real media-stream path. The calls are made with a one-day key minted for the agent's
 * developer and revoked afterwards, so they are that developer's sessions, visible on the agent's call pages.
 */
/** An audio turn from the CLI: a file beside the scenario file, or a URL; stored objects need the REST API. */
async function loadAudio(audio: TurnAudio, file: string): Promise<Buffer> {
  if (audio.file) return readFile(resolve(dirname(file), audio.file));
  if (audio.url) {
    const res = await fetch(audio.url);
    if (!res.ok) throw new Error(`${audio.url} answered ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  }
  throw new Error('audio.key (a stored object) is read by the REST API (POST /v1/agents/:id/tests), not the CLI');
}

export async function agentTestsCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { junit: { type: 'string' } } });
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${AGENT_TESTS_USAGE}`);
    return 2;
  }
  const [agentId, ...files] = parsed.positionals;
  if (!agentId || files.length === 0) {
    console.error(`an agent id and at least one scenario file are required\n\n${AGENT_TESTS_USAGE}`);
    return 2;
  }
  let scenarios;
  try {
    scenarios = await loadScenarioFiles(files);
  } catch (e) {
    if (e instanceof ScenarioFileError || (e as NodeJS.ErrnoException).code === 'ENOENT') {
      console.error((e as Error).message);
      return 2;
    }
    throw e;
  }

  const base = loadConfig();
  const db = createDb(base.DATABASE_URL, 2);
  let slot: PlatformSlot | null = null;
  let key: { id: string; key: string } | null = null;
  let developerId: string | null = null;
  try {
    await migrate(db);
    developerId = await agentOwner(db, agentId);
    const provider = developerId && (await agentLlmProvider(db, developerId, agentId, null));
    if (!developerId || !provider) {
      console.error(`no agent ${agentId}`);
      return 2;
    }
    key = await mintKey(db, developerId, 'agent-tests', 1);
    // The same private platforms as a REST run's, one at a time: each scenario on one of its kind (scripted,
    // the local reply engine, or the agent's vendor LLM, metered), every call recorded as test traffic.
    const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1' });
    const log = createLogger(config.LOG_LEVEL);
    slot = await PlatformSlot.open((c) => startPlatform(c, log, ['api', 'realtime']), config, null);
    const platforms = slot;
    const ac = new AbortController();
    process.once('SIGINT', () => ac.abort());
    const results = await runSuite({ apiKey: key.key, agentId }, scenarios, (s) => platforms.forScenario(s, provider), {
      signal: ac.signal,
      loadAudio,
      onResult: (r) => {
        console.log(JSON.stringify(r));
        console.error(describeResult(r));
      },
    });
    if (parsed.values.junit) await writeFile(parsed.values.junit, junitXml(agentId, results));
    const failed = results.filter((r) => !r.passed).length;
    console.error(`\n${results.length - failed} passed, ${failed} failed`);
    return failed === 0 && results.length === scenarios.length ? 0 : 1;
  } finally {
    await slot?.close();
    if (key && developerId) await revokeKey(db, developerId, key.id, 'revoked');
    await db.end();
  }
}
