import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VideoJob } from '../../shared/contracts/video.ts';
import { waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

/** Polls a job until it finishes, recording every progress value seen on the way. */
export async function waitForJob(
  p: TestPlatform,
  key: string,
  id: string,
  timeoutMs = 60_000,
): Promise<{ job: VideoJob; progress: number[] }> {
  const progress: number[] = [];
  const job = await waitUntil(
    async () => {
      const res = await p.request(`/v1/video/${id}`, { key });
      const j = (await res.json()) as VideoJob;
      if (progress.at(-1) !== j.progress) progress.push(j.progress);
      return j.status === 'completed' || j.status === 'failed' ? j : null;
    },
    timeoutMs,
    40,
  );
  return { job, progress };
}

/** Downloads a result URL and probes it with ffprobe. */
export async function probeUrl(
  url: string,
): Promise<{ streams: { codec_name: string; width?: number; height?: number }[]; format: { duration: string } }> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`download answered ${res.status}`);
  const path = join(tmpdir(), `vap-probe-${Date.now()}-${Math.random().toString(36).slice(2)}.mp4`);
  writeFileSync(path, Buffer.from(await res.arrayBuffer()));
  return JSON.parse(
    execFileSync('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_streams', '-show_format', path]).toString(),
  );
}

export const TEST_ENV = {
  OUTBOUND_ALLOWLIST: '127.0.0.1',
  WEBHOOK_RETRY_SCALE: '0.0002',
  VIDEO_AVATAR_SIZE: '256',
  VIDEO_MAX_INPUT_BYTES: String(2 * 1024 * 1024),
  RECONCILE_INTERVAL_MS: '1000',
  RECONCILE_AFTER_MS: '2000',
};
