import { rm } from 'node:fs/promises';
import type { Logger } from '../../../shared/kernel/observability/logger.ts';
import {
  attachRecording,
  expirePendingSessions,
  failLostSessions,
  sessionOwner,
  touchSessions,
} from '../../../shared/domains/realtime/sessions.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import { liveSessionIds } from './live.ts';
import { listSpillFiles, recordingObjectKey, recoverSpillFile } from '../pipeline/output/recorder.ts';

/** How often a realtime process touches its live sessions and looks for lost ones. */
export const HEARTBEAT_MS = 15_000;
/** Four missed heartbeats: the process that ran the session is gone (crashed, killed, its pod evicted). */
export const STALE_AFTER_SECONDS = 60;

export interface KeeperReport {
  lost: string[];
  expired: number;
  recovered: string[];
}

/**
 * One pass of session upkeep, safe to run in every realtime process at once (each step is a conditional UPDATE):
 * 1. touch the sessions this process runs;
 * 2. end sessions nobody has touched for STALE_AFTER_SECONDS as failed (`worker_lost`), so traces and lists do not
 *    show calls that ended with a crash as live forever;
 * 3. mark sessions whose token expired before any stream claimed it as `expired`;
 * 4. upload recordings that a dead process left in this machine's spill directory (a restarted container keeps
 *    its emptyDir) and attach them to their sessions.
 */
export async function keepSessions(infra: Infra, log: Logger): Promise<KeeperReport> {
  const { db } = infra;
  const live = liveSessionIds(infra);
  await touchSessions(db, live);
  const lost = await failLostSessions(db, STALE_AFTER_SECONDS, live);
  const expired = await expirePendingSessions(db);
  for (const id of lost) log.warn({ sessionId: id }, 'session lost with its process; marked failed');
  return {
    lost,
    expired,
    recovered: await recoverOrphanRecordings(infra, log, new Set(live)),
  };
}

async function recoverOrphanRecordings(infra: Infra, log: Logger, live: Set<string>): Promise<string[]> {
  const recovered: string[] = [];
  for (const { sessionId, path } of await listSpillFiles(infra.config.REDIS_PREFIX)) {
    if (live.has(sessionId)) continue;
    const row = await sessionOwner(infra.db, sessionId);
    // Active: another process on this machine is running it (its heartbeat is fresh, or step 2 would have ended it).
    if (row?.status === 'active') continue;
    try {
      const file = row ? await recoverSpillFile(path) : null;
      if (row && file) {
        const key = recordingObjectKey(row.developer_id, sessionId);
        await infra.storage.putFile(key, path, 'audio/wav');
        await attachRecording(infra.db, sessionId, key, file.durationMs);
        recovered.push(sessionId);
        log.info({ sessionId, recordingMs: file.durationMs }, 'recording of a lost session recovered');
      }
      await rm(path, { force: true });
    } catch (e) {
      log.error({ sessionId, err: (e as Error).message }, 'recording recovery failed; will retry');
    }
  }
  return recovered;
}

/** Runs keepSessions every HEARTBEAT_MS until stopped (the realtime role starts it). */
export function startSessionKeeper(infra: Infra, log: Logger): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    running = keepSessions(infra, log).catch((e: Error) => log.warn({ err: e.message }, 'session keeper failed'));
  };
  const timer = setInterval(tick, HEARTBEAT_MS);
  timer.unref();
  tick();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
