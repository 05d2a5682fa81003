import { rm } from 'node:fs/promises';
import type { Logger } from '../../../shared/observability/logger.ts';
import type { Infra } from '../../../shared/runtime/infra.ts';
import { liveSessionIds } from './live.ts';
import { listSpillFiles, recordingObjectKey, recoverSpillFile } from './recorder.ts';

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
  if (live.length)
    await db.query(`update rt_sessions set heartbeat_at = now() where id = any($1) and status = 'active'`, [live]);
  const lost = await db.query<{ id: string }>(
    `update rt_sessions
        set status = 'failed', end_reason = 'worker_lost', ended_at = coalesce(heartbeat_at, started_at),
            error = 'the realtime process running this session stopped without ending it'
      where status = 'active' and coalesce(heartbeat_at, started_at) < now() - make_interval(secs => $1)
        and not (id = any($2))
      returning id`,
    [STALE_AFTER_SECONDS, live],
  );
  const expired = await db.query(
    `update rt_sessions set status = 'expired', ended_at = expires_at
      where status = 'pending' and expires_at < now()`,
  );
  for (const { id } of lost.rows) log.warn({ sessionId: id }, 'session lost with its process; marked failed');
  return {
    lost: lost.rows.map((r) => r.id),
    expired: expired.rowCount ?? 0,
    recovered: await recoverOrphanRecordings(infra, log, new Set(live)),
  };
}

async function recoverOrphanRecordings(infra: Infra, log: Logger, live: Set<string>): Promise<string[]> {
  const recovered: string[] = [];
  for (const { sessionId, path } of await listSpillFiles(infra.config.REDIS_PREFIX)) {
    if (live.has(sessionId)) continue;
    const { rows } = await infra.db.query<{ developer_id: string; status: string }>(
      'select developer_id, status from rt_sessions where id = $1',
      [sessionId],
    );
    const row = rows[0];
    // Active: another process on this machine is running it (its heartbeat is fresh, or step 2 would have ended it).
    if (row?.status === 'active') continue;
    try {
      const file = row ? await recoverSpillFile(path) : null;
      if (row && file) {
        const key = recordingObjectKey(row.developer_id, sessionId);
        await infra.storage.putFile(key, path, 'audio/wav');
        await infra.db.query(
          `update rt_sessions set recording_key = $2, recording_ms = $3 where id = $1 and recording_key is null`,
          [sessionId, key, file.durationMs],
        );
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
