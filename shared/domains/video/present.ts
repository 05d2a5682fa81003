import type { VideoJob } from '../../contracts/video.ts';
import type { Storage } from '../../kernel/storage/s3.ts';
import type { VideoJobRow } from './store.ts';

/**
 * The contract's Video job from a row. Results keep the S3 key of the output (`video_key`); the client sees a
 * presigned `video_url` made fresh on every read (and in the webhook), valid for VIDEO_URL_TTL_SECONDS.
 */
export async function toVideoJob(row: VideoJobRow, storage: Storage, ttlSeconds: number): Promise<VideoJob> {
  let result: VideoJob['result'];
  if (row.status === 'completed' && row.result) {
    const { video_key: key, ...rest } = row.result as { video_key?: string } & Record<string, unknown>;
    result = {
      ...(rest as VideoJob['result'] & object),
      ...(key ? { video_url: await storage.presignGet(key, ttlSeconds) } : {}),
    };
  }
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    provider: row.provider,
    progress: row.status === 'completed' ? 1 : Math.round(row.progress * 1000) / 1000,
    ...(result ? { result } : {}),
    ...(row.status === 'failed' && row.error ? { error: row.error } : {}),
    created_at: row.created_at.toISOString(),
    // Absent until the job finishes: the contract types it as a string, never null.
    ...(row.completed_at ? { completed_at: row.completed_at.toISOString() } : {}),
    owner_id: row.owner_id,
  };
}
