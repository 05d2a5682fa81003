import { parseArgs } from 'node:util';
import { startDeepgramLiveDouble } from '../shared/domains/agent-tests/simulators/deepgram-live.ts';
import { describeReplay } from '../shared/domains/agent-tests/replay/describe.ts';
import { executeReplay } from '../shared/domains/agent-tests/replay/job.ts';
import { loadRecordedCall } from '../shared/domains/agent-tests/replay/recorded-call.ts';
import { newCallReplay } from '../shared/domains/agent-tests/replay/request.ts';
import { loadCallReplay, toCallReplay } from '../shared/domains/agent-tests/replay/store.ts';
import { callOwners } from '../shared/domains/realtime/store.ts';
import { mintKey } from '../shared/platform/auth/mint-key.ts';
import { loadConfig } from '../shared/kernel/config/index.ts';
import { revokeKey } from '../shared/kernel/db/api-keys.ts';
import { migrate } from '../shared/kernel/db/migrate.ts';
import { createDb } from '../shared/kernel/db/pool.ts';
import { isApiError } from '../shared/kernel/errors/api-error.ts';
import { createLogger } from '../shared/kernel/observability/logger.ts';
import { startPlatform } from './platform.ts';

export const CALL_REPLAY_USAGE = `  npm run cli -- calls replay <callId> [--version N] [--developer ID] [--json]
      replays a recorded call (CallSid or session id) through its agent as it is now, or as version N, offline:
      the api and realtime roles start in this process with the deployment's database, Redis and storage, and a
      simulated STT that hears the call's recorded transcript; the agent's own LLM answers (the local reply engine
      offline). Prints the per-turn diff (--json: the replay resource); exit 0 when the replay ran, 1 when it
      failed, 2 on bad input`;

/** What the simulated STT is, in the result: it cannot hear the audio, it is told what the call's STT heard. */
export const REPLAY_STT_LABEL =
  'simulated (the recorded call’s transcript on the replayed audio’s clock, Deepgram-protocol simulator)';

/**
 * `calls replay`: the replay job's work in this process, against a private in-process platform whose STT is the
 * simulator scripted with the call's transcript (so a machine with no vendor key can replay a phone call). The
 * replay is stored like one asked for over the API and its session is the developer's, visible on the call pages.
 */
export async function callReplayCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { version: { type: 'string' }, developer: { type: 'string' }, json: { type: 'boolean' } },
    });
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${CALL_REPLAY_USAGE}`);
    return 2;
  }
  const [callId] = parsed.positionals;
  const version = parsed.values.version === undefined ? undefined : Number(parsed.values.version);
  if (!callId || (version !== undefined && !(Number.isInteger(version) && version >= 1))) {
    console.error(`a call id (and --version as a whole number ≥ 1) is required\n\n${CALL_REPLAY_USAGE}`);
    return 2;
  }
  const base = loadConfig();
  const db = createDb(base.DATABASE_URL, 2);
  let lines: string[] = [];
  const stt = await startDeepgramLiveDouble({
    key: 'call-replay-simulated-stt',
    energyThreshold: 300,
    script: (_conn, u) => lines[u] ?? '',
  });
  let platform: Awaited<ReturnType<typeof startPlatform>> | null = null;
  let key: { id: string; key: string } | null = null;
  let developerId: string | undefined = parsed.values.developer;
  try {
    await migrate(db);
    if (!developerId) {
      const owners = await callOwners(db, callId);
      if (owners.length !== 1) {
        console.error(
          owners.length ? `call ${callId} is known to several developers: give --developer` : `no call ${callId}`,
        );
        return 2;
      }
      developerId = owners[0]!;
    }
    const config = loadConfig({
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DEEPGRAM_BASE_URL: stt.url,
      DEEPGRAM_API_KEY: stt.key,
    });
    platform = await startPlatform(config, createLogger(config.LOG_LEVEL), ['api', 'realtime']);
    const infra = platform.infra;
    let row;
    try {
      row = await newCallReplay(infra, developerId, callId, version);
    } catch (e) {
      if (!isApiError(e)) throw e;
      console.error(e.message);
      return 2;
    }
    const call = await loadRecordedCall(infra, developerId, row.session_id);
    if (!call) throw new Error(`call ${callId} disappeared`);
    key = await mintKey(db, developerId, `call replay ${row.id}`, 1);
    const ac = new AbortController();
    process.once('SIGINT', () => ac.abort());
    await executeReplay(
      infra,
      row,
      call,
      { url: platform.url, apiKey: key.key, agentId: row.agent_id, agentVersion: row.agent_version_now },
      { stt: { use: (next) => (lines = next) }, sttLabel: REPLAY_STT_LABEL, signal: ac.signal },
    );
    const done = toCallReplay((await loadCallReplay(db, row.id))!);
    console.log(parsed.values.json ? JSON.stringify(done) : describeReplay(done));
    return done.status === 'completed' ? 0 : 1;
  } finally {
    await platform?.stop();
    if (key && developerId) await revokeKey(db, developerId, key.id, 'revoked');
    await db.end();
    await stt.close();
  }
}
