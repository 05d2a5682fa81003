import { parseArgs } from 'node:util';
import { describeReplay } from '../shared/domains/agent-tests/replay/describe.ts';
import { replayOnPrivatePlatform } from '../shared/domains/agent-tests/replay/job.ts';
import { newCallReplay } from '../shared/domains/agent-tests/replay/request.ts';
import { loadCallReplay, toCallReplay } from '../shared/domains/agent-tests/replay/store.ts';
import { callOwners } from '../shared/domains/realtime/sessions.ts';
import { loadConfig } from '../shared/kernel/config/index.ts';
import { isApiError } from '../shared/kernel/errors/api-error.ts';
import { createLogger } from '../shared/kernel/observability/logger.ts';
import { createInfra } from '../shared/platform/infra.ts';
import { startPlatform } from './platform.ts';

export const CALL_REPLAY_USAGE = `  npm run cli -- calls replay <callId> [--version N] [--reply TEXT …] [--developer ID] [--json]
      replays a recorded call (CallSid or session id) through its agent as it is now, or as version N: the api and
      realtime roles start in this process with the deployment's database, Redis and storage, and a simulated STT
      that hears the call's recorded transcript. The agent's own LLM answers (offline with the local reply engine),
      or --reply lines in order (scripted, offline). Prints the per-turn diff (--json: the replay resource); exit 0
      when the replay ran, 1 when it failed, 2 on bad input`;

/**
 * `calls replay`: what the `call-replay.run` job does, in this process. The replay is stored like one asked for
 * over the API, and its call is the developer's session, on the call pages.
 */
export async function callReplayCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        version: { type: 'string' },
        reply: { type: 'string', multiple: true },
        developer: { type: 'string' },
        json: { type: 'boolean' },
      },
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
  const replies = parsed.values.reply;
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL);
  const infra = await createInfra(config, log, { migrate: true });
  try {
    let developerId = parsed.values.developer;
    if (!developerId) {
      const owners = await callOwners(infra.db, callId);
      if (owners.length !== 1) {
        console.error(
          owners.length ? `call ${callId} is known to several developers: give --developer` : `no call ${callId}`,
        );
        return 2;
      }
      developerId = owners[0]!;
    }
    let row;
    try {
      row = await newCallReplay(infra, developerId, callId, {
        ...(version ? { version } : {}),
        ...(replies?.length ? { llm: { replies } } : {}),
      });
    } catch (e) {
      if (!isApiError(e)) throw e;
      console.error(e.message);
      return 2;
    }
    const ac = new AbortController();
    process.once('SIGINT', () => ac.abort());
    await replayOnPrivatePlatform(infra, row, {
      startPlatform: (c, l) => startPlatform(c, l, ['api', 'realtime']),
      log,
      signal: ac.signal,
    });
    const done = toCallReplay((await loadCallReplay(infra.db, row.id))!);
    console.log(parsed.values.json ? JSON.stringify(done) : describeReplay(done));
    return done.status === 'completed' ? 0 : 1;
  } finally {
    await infra.close();
  }
}
