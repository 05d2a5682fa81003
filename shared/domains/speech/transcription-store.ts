import { scrubInternals } from '../../kernel/errors/scrub.ts';
import type { Queryable } from '../../kernel/db/pool.ts';

export type TranscriptionSource = { kind: 'upload'; key: string } | { kind: 'url'; url: string };

export interface TranscriptionJobRow {
  id: string;
  developer_id: string;
  status: 'processing' | 'completed' | 'failed';
  provider: string;
  options: Record<string, unknown>;
  source: TranscriptionSource;
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  audio_seconds: number | null;
  /** How far a processing job has decoded (migration 1030); null before its first report. */
  progress: { doneSeconds: number; totalSeconds: number } | null;
  request_id: string | null;
  created_at: Date;
  completed_at: Date | null;
}

export async function insertTranscriptionJob(
  db: Queryable,
  row: Pick<TranscriptionJobRow, 'id' | 'developer_id' | 'provider' | 'options' | 'source' | 'request_id'>,
): Promise<TranscriptionJobRow> {
  const { rows } = await db.query<TranscriptionJobRow>(
    `insert into transcription_jobs (id, developer_id, status, provider, options, source, request_id)
     values ($1, $2, 'processing', $3, $4, $5, $6) returning *`,
    [row.id, row.developer_id, row.provider, row.options, row.source, row.request_id],
  );
  return rows[0]!;
}

/** A job of one developer; another developer's id reads as missing. */
export async function getTranscriptionJob(
  db: Queryable,
  developerId: string,
  id: string,
): Promise<TranscriptionJobRow | null> {
  const { rows } = await db.query<TranscriptionJobRow>(
    'select * from transcription_jobs where id = $1 and developer_id = $2',
    [id, developerId],
  );
  return rows[0] ?? null;
}

/**
 * The status and charged units of the transcription job a credit hold's key names (`transcription:<id>`), as a
 * subquery for the hold sweeper's one statement (billing/hold-sweeper.ts, handed it by composition/reconciler.ts): `holdKey` is its SQL expression.
 */
export function heldTranscriptionJobSql(holdKey: string): string {
  return `select status, audio_seconds::float8 as units from transcription_jobs
           where ${holdKey} like 'transcription:%' and id = substring(${holdKey} from 15)`;
}

/** Accepted jobs (`processing`) older than `olderThanMs`, oldest first: candidates for the reconciler. */
export async function staleProcessingTranscriptions(db: Queryable, olderThanMs: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select id from transcription_jobs where status = 'processing'
        and created_at < now() - make_interval(secs => $1::float / 1000)
      order by created_at limit 200`,
    [olderThanMs],
  );
  return rows.map((r) => r.id);
}

export async function loadTranscriptionJob(db: Queryable, id: string): Promise<TranscriptionJobRow | null> {
  const { rows } = await db.query<TranscriptionJobRow>('select * from transcription_jobs where id = $1', [id]);
  return rows[0] ?? null;
}

/** Records how far a processing job has decoded (a finished job is left alone). */
export async function setTranscriptionProgress(
  db: Queryable,
  id: string,
  progress: { doneSeconds: number; totalSeconds: number },
): Promise<void> {
  await db.query(`update transcription_jobs set progress = $2 where id = $1 and status = 'processing'`, [
    id,
    JSON.stringify(progress),
  ]);
}

/** Moves a processing job to completed; a job already finished (a re-run after a stall) is left alone. */
export async function completeTranscriptionJob(
  db: Queryable,
  id: string,
  result: unknown,
  audioSeconds: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update transcription_jobs set status = 'completed', result = $2, audio_seconds = $3, completed_at = now()
      where id = $1 and status = 'processing'`,
    [id, JSON.stringify(result), audioSeconds],
  );
  return (rowCount ?? 0) > 0;
}

export async function failTranscriptionJob(
  db: Queryable,
  id: string,
  error: { code: string; message: string },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update transcription_jobs set status = 'failed', error = $2, completed_at = now()
      where id = $1 and status = 'processing'`,
    // Shown to the caller: no worker paths or internal addresses.
    [id, JSON.stringify({ ...error, message: scrubInternals(error.message) })],
  );
  return (rowCount ?? 0) > 0;
}
