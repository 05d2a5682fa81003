import type { JobsOptions } from 'bullmq';
import { catalog, type JobName, type JobPayload } from './catalog.ts';
import { entryState } from './entry-state.ts';
import type { Queues } from './queues.ts';

/**
 * Adds a job under a fixed id unless that id is already on the queue (waiting, delayed or running): what a periodic
 * pass (the reconciler) adds so that, however many passes run while the queue is busy, one such job waits. A
 * finished or failed entry under the id is removed first, since BullMQ ignores an add under an id it still holds.
 * True when the job was added.
 */
export async function enqueueUnlessQueued<N extends JobName>(
  queues: Queues,
  name: N,
  payload: JobPayload<N>,
  jobId: string,
  opts: Pick<JobsOptions, 'priority' | 'delay'> = {},
): Promise<boolean> {
  const q = queues.get(catalog[name].queue);
  if ((await entryState(q, jobId)).state === 'present') return false;
  await q.remove(jobId);
  await queues.enqueue(name, payload, { ...opts, jobId });
  return true;
}
