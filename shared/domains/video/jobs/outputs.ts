import type { Infra } from '../../../platform/infra.ts';
import { objectKey } from '../../../kernel/storage/keys.ts';
import type { StepContext } from '../lifecycle.ts';

/** Uploads a finished MP4 to video-outputs/<job>/<name> and returns its key. */
export async function storeOutput(infra: Infra, s: StepContext, path: string, name: string): Promise<string> {
  const key = objectKey(s.job.owner_id, 'video-outputs', s.job.id, name);
  await infra.storage.putFile(key, path, 'video/mp4', s.signal);
  return key;
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
