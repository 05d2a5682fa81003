import { readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { agentOwner } from '../shared/domains/agents/db.ts';
import { mintKey } from '../shared/platform/auth/mint-key.ts';
import { ScenarioFileError, type TurnAudio } from '../shared/kernel/contracts/agent-tests.ts';
import { loadConfig } from '../shared/kernel/config/index.ts';
import { revokeKey } from '../shared/kernel/db/api-keys.ts';
import { migrate } from '../shared/kernel/db/migrate.ts';
import { createDb } from '../shared/kernel/db/pool.ts';
import { createLogger } from '../shared/kernel/observability/logger.ts';
import { junitXml } from '../shared/domains/agent-tests/junit.ts';
import { offlineConfig } from '../shared/domains/agent-tests/execute.ts';
import { startOfflineVendors } from '../shared/domains/agent-tests/offline-vendors.ts';
import { describeResult, loadScenarioFiles, runSuite } from '../shared/domains/agent-tests/suite.ts';
import { startPlatform } from './platform.ts';

export const AGENT_TESTS_USAGE = `  npm run cli -- agents test <agentId> <files…> [--junit FILE]
      runs scenario files (YAML or JSON, docs/agent-tests.md) against the agent as configured, offline: the api and
      realtime roles start in this process on a free port with the deployment's database, Redis and storage, and
      with a scripted LLM and a simulated STT; prints one JSON line per scenario, a summary on stderr; exit 0 only
      when every expectation holds (1 when one fails, 2 on bad input)`;

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

  const vendors = await startOfflineVendors();
  const base = loadConfig();
  const db = createDb(base.DATABASE_URL, 2);
  let platform: Awaited<ReturnType<typeof startPlatform>> | null = null;
  let key: { id: string; key: string } | null = null;
  let developerId: string | null = null;
  try {
    await migrate(db);
    developerId = await agentOwner(db, agentId);
    if (!developerId) {
      console.error(`no agent ${agentId}`);
      return 2;
    }
    key = await mintKey(db, developerId, 'agent-tests', 1);
    // The same private platform as a REST run's: vendors simulated or scripted, calls recorded as test traffic.
    const config = offlineConfig(loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1' }), vendors, null);
    platform = await startPlatform(config, createLogger(config.LOG_LEVEL), ['api', 'realtime']);
    const ac = new AbortController();
    process.once('SIGINT', () => ac.abort());
    const results = await runSuite({ url: platform.url, apiKey: key.key, agentId }, scenarios, vendors, {
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
    await platform?.stop();
    if (key && developerId) await revokeKey(db, developerId, key.id, 'revoked');
    await db.end();
    await vendors.close();
  }
}
