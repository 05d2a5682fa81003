import type { Infra } from '../../platform/infra.ts';
import { enqueueDubFlow } from './dub-flow.ts';
import type { VideoJobRow } from './store.ts';

const JOB_OF = {
  generate: 'video.generate',
  avatar: 'video.avatar',
  lipsync: 'video.lipsync',
  analyze: 'video.analyze',
} as const;

/**
 * Puts a job row on its queue (or the dub flow). Idempotent: the BullMQ job id is the row id. `delayMs` is the
 * reconciler's backoff (a dub flow starts at once: its steps have their own).
 */
export async function enqueueVideoJob(infra: Infra, row: Pick<VideoJobRow, 'id' | 'type'>, delayMs = 0): Promise<void> {
  if (row.type === 'dub') return enqueueDubFlow(infra, row.id);
  await infra.queues.enqueue(JOB_OF[row.type], { videoJobId: row.id }, { jobId: row.id, delay: delayMs });
}

/** The BullMQ queue and job id that stand for a row (the dub flow's parent for dub jobs). */
export function queueEntryOf(row: Pick<VideoJobRow, 'id' | 'type'>): { queue: string; jobId: string } {
  if (row.type === 'dub') return { queue: 'cpu', jobId: `${row.id}-mux` };
  const queue = { generate: 'gpu-generate', avatar: 'gpu-avatar', lipsync: 'gpu-lipsync', analyze: 'gpu-analysis' }[
    row.type
  ];
  return { queue, jobId: row.id };
}
