import type { Infra } from '../../../platform/infra.ts';
import { objectKey } from '../../../kernel/storage/keys.ts';
import type { JobOutcome, StepContext } from '../lifecycle.ts';

/** Uploads a finished MP4 to video-outputs/<job>/<name> and returns its key. */
export async function storeOutput(infra: Infra, s: StepContext, path: string, name: string): Promise<string> {
  const key = objectKey(s.job.owner_id, 'video-outputs', s.job.id, name);
  await infra.storage.putFile(key, path, 'video/mp4', s.signal);
  return key;
}

/**
 * Uploads a rendered MP4 (storeOutput) and gives the job's outcome: the video's key, length, size and the engine
 * that made it, billed per second of generated video. Avatar, generation and lip-sync jobs end the same way.
 */
export async function storedVideoOutcome(
  infra: Infra,
  s: StepContext,
  path: string,
  name: string,
  out: { durationSeconds: number; width: number; height: number; provider: string },
): Promise<JobOutcome> {
  const key = await storeOutput(infra, s, path, name);
  return {
    result: {
      video_key: key,
      duration_seconds: out.durationSeconds,
      width: out.width,
      height: out.height,
      provider: out.provider,
    },
    units: out.durationSeconds,
  };
}

/** Uploads an intermediate artifact (work/<job>/<name>) and returns its key. */
export async function storeWork(
  infra: Infra,
  s: StepContext,
  path: string,
  name: string,
  type: string,
): Promise<string> {
  const key = objectKey(s.job.owner_id, 'video-work', s.job.id, name);
  await infra.storage.putFile(key, path, type, s.signal);
  return key;
}

export function presign(infra: Infra, key: string): Promise<string> {
  return infra.storage.presignGet(key, 6 * 3600);
}
