import { scrubInternals } from '../../kernel/errors/scrub.ts';
import type { VideoJobType } from '../../contracts/video.ts';
import type { Queryable } from '../../kernel/db/pool.ts';

export interface VideoJobRow {
  id: string;
  owner_id: string;
  type: VideoJobType;
  status: 'pending' | 'processing' | 'completed' | 'failed';
  provider: string;
  progress: number;
  request: Record<string, unknown>;
  state: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  webhook_url: string | null;
  billable: boolean;
  request_id: string;
  attempts: number;
  gpu_seconds: number;
  charged_units: number | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  updated_at: Date;
}

export async function insertVideoJob(
  db: Queryable,
  row: Pick<
    VideoJobRow,
    'id' | 'owner_id' | 'type' | 'provider' | 'request' | 'webhook_url' | 'billable' | 'request_id'
  >,
): Promise<VideoJobRow> {
  const { rows } = await db.query<VideoJobRow>(
    `insert into video_jobs (id, owner_id, type, provider, request, webhook_url, billable, request_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning *`,
    [row.id, row.owner_id, row.type, row.provider, row.request, row.webhook_url, row.billable, row.request_id],
  );
  return rows[0]!;
}

/** Owner-scoped read: another tenant's id is simply not found. */
export async function getOwnedVideoJob(db: Queryable, ownerId: string, id: string): Promise<VideoJobRow | null> {
  const { rows } = await db.query<VideoJobRow>('select * from video_jobs where id = $1 and owner_id = $2', [
    id,
    ownerId,
  ]);
  return rows[0] ?? null;
}

/** The owner's jobs, newest first (ids are time-sortable), those before `beforeId` when it is given. */
export async function listOwnedVideoJobs(
  db: Queryable,
  ownerId: string,
  limit: number,
  beforeId: string | null,
): Promise<VideoJobRow[]> {
  const { rows } = await db.query<VideoJobRow>(
    `select * from video_jobs where owner_id = $1 and ($2::text is null or id < $2) order by id desc limit $3`,
    [ownerId, beforeId, limit],
  );
  return rows;
}

/** The storage key of the output of one of the owner's completed jobs; null when there is none. */
export async function ownedOutputKey(db: Queryable, ownerId: string, id: string): Promise<string | null> {
  const { rows } = await db.query<{ key: string | null }>(
    `select result->>'video_key' as key from video_jobs where id = $1 and owner_id = $2 and status = 'completed'`,
    [id, ownerId],
  );
  return rows[0]?.key ?? null;
}

/** pending|processing → processing (a rerun after a crash re-enters processing); null when already finished. */
export async function startAttempt(db: Queryable, id: string): Promise<VideoJobRow | null> {
  const { rows } = await db.query<VideoJobRow>(
    `update video_jobs set status = 'processing', started_at = coalesce(started_at, now()), attempts = attempts + 1,
       updated_at = now() where id = $1 and status in ('pending', 'processing') returning *`,
    [id],
  );
  return rows[0] ?? null;
}

/** Progress only rises. */
export async function setProgress(db: Queryable, id: string, fraction: number): Promise<void> {
  await db.query(
    `update video_jobs set progress = greatest(progress, least($2::real, 0.99)), updated_at = now()
     where id = $1 and status = 'processing'`,
    [id, fraction],
  );
}

/** Records an intermediate artifact of a step (merged into `state`). */
export async function mergeState(db: Queryable, id: string, patch: Record<string, unknown>): Promise<void> {
  await db.query(`update video_jobs set state = state || $2::jsonb, updated_at = now() where id = $1`, [id, patch]);
}

export async function addGpuSeconds(db: Queryable, id: string, seconds: number): Promise<void> {
  await db.query('update video_jobs set gpu_seconds = gpu_seconds + $2 where id = $1', [id, seconds]);
}

/** processing → completed, once: returns null when another run already finished it. */
export async function markCompleted(
  db: Queryable,
  id: string,
  result: Record<string, unknown>,
  chargedUnits: number,
): Promise<VideoJobRow | null> {
  const { rows } = await db.query<VideoJobRow>(
    `update video_jobs set status = 'completed', progress = 1, result = $2, charged_units = $3, error = null,
       completed_at = now(), updated_at = now() where id = $1 and status in ('pending', 'processing') returning *`,
    [id, result, chargedUnits],
  );
  return rows[0] ?? null;
}

export async function markFailed(
  db: Queryable,
  id: string,
  error: { code: string; message: string },
): Promise<VideoJobRow | null> {
  const { rows } = await db.query<VideoJobRow>(
    `update video_jobs set status = 'failed', error = $2, completed_at = now(), updated_at = now()
     where id = $1 and status in ('pending', 'processing') returning *`,
    // The error is shown to the caller and sent in the failure webhook: no worker paths or internal addresses.
    [id, { ...error, message: scrubInternals(error.message) }],
  );
  return rows[0] ?? null;
}

/**
 * The status and charged units of the video job a credit hold's key names (`video:<id>`), as a subquery for the
 * hold sweeper's one statement (billing/hold-sweeper.ts, handed it by composition/reconciler.ts): `holdKey` is its SQL expression.
 */
export function heldVideoJobSql(holdKey: string): string {
  return `select status, charged_units::float8 as units from video_jobs
           where ${holdKey} like 'video:%' and id = substring(${holdKey} from 7)`;
}

/** Open jobs not touched for a while: candidates for the reconciler. */
export async function staleOpenJobs(db: Queryable, olderThanMs: number, limit = 200): Promise<VideoJobRow[]> {
  const { rows } = await db.query<VideoJobRow>(
    `select * from video_jobs where status in ('pending', 'processing')
     and updated_at < now() - make_interval(secs => $1::float / 1000) order by updated_at limit $2`,
    [olderThanMs, limit],
  );
  return rows;
}
