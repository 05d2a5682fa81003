import { z } from 'zod';
import type { JobDefinition } from '../define.ts';

/**
 * Jobs of the video area. Payloads carry only the job row's id: the request, owner and intermediate artifacts
 * live in Postgres (video_jobs), so a re-enqueued job (reconciler) needs nothing Redis lost. The BullMQ job id is
 * the row id (`<row id>` or `<row id>:<step>` for dub steps), which makes every enqueue idempotent.
 */
const VideoJobRef = z.object({ videoJobId: z.string().min(1) });
const min = 60_000;
// Plain literals (not defineJob) keep each queue name's literal type, which the pool handler maps key on.

export const videoJobs = {
  // GPU pools (one process per GPU; each queue is its own Deployment in the cluster).
  'video.avatar': {
    schema: VideoJobRef,
    queue: 'gpu-avatar' as const,
    timeoutMs: 20 * min,
    attempts: 3,
    backoffMs: 2000,
  },
  'video.lipsync': {
    schema: VideoJobRef,
    queue: 'gpu-lipsync' as const,
    timeoutMs: 30 * min,
    attempts: 3,
    backoffMs: 2000,
  },
  'video.analyze': {
    schema: VideoJobRef,
    queue: 'gpu-analysis' as const,
    timeoutMs: 30 * min,
    attempts: 3,
    backoffMs: 2000,
  },
  'video.generate': {
    schema: VideoJobRef,
    queue: 'gpu-generate' as const,
    timeoutMs: 30 * min,
    attempts: 3,
    backoffMs: 2000,
  },
  // Dub flow (FlowProducer): transcribe → translate → synthesize → lipsync (GPU) → mux (the parent).
  'video.dub.transcribe': {
    schema: VideoJobRef,
    queue: 'cpu' as const,
    timeoutMs: 15 * min,
    attempts: 3,
    backoffMs: 2000,
  },
  'video.dub.translate': {
    schema: VideoJobRef,
    queue: 'cpu' as const,
    timeoutMs: 5 * min,
    attempts: 3,
    backoffMs: 2000,
  },
  'video.dub.synthesize': {
    schema: VideoJobRef,
    queue: 'cpu' as const,
    timeoutMs: 15 * min,
    attempts: 3,
    backoffMs: 2000,
  },
  'video.dub.lipsync': {
    schema: VideoJobRef,
    queue: 'gpu-lipsync' as const,
    timeoutMs: 30 * min,
    attempts: 3,
    backoffMs: 2000,
  },
  'video.dub.mux': { schema: VideoJobRef, queue: 'cpu' as const, timeoutMs: 10 * min, attempts: 3, backoffMs: 2000 },
  /**
   * Installed as a Redis job scheduler by earlier versions; the reconciler now runs on every worker's own timer
   * (shared/composition/reconciler.ts). Kept so a scheduler left in Redis still finds a handler.
   */
  'video.reconcile': { schema: z.object({}), queue: 'cpu' as const, timeoutMs: min, attempts: 1, backoffMs: 1000 },
} satisfies Record<string, JobDefinition>;
