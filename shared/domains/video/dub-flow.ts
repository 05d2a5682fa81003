import { FlowProducer, type FlowJob } from 'bullmq';
import { catalog, type JobName } from '../../kernel/queue/catalog.ts';
import { queuePrefix } from '../../kernel/queue/queues.ts';
import type { Infra } from '../../platform/infra.ts';

/** The dub pipeline, deepest child first: BullMQ runs children before their parent. */
export const DUB_STEPS = [
  'video.dub.transcribe',
  'video.dub.translate',
  'video.dub.synthesize',
  'video.dub.lipsync',
  'video.dub.mux',
] as const satisfies readonly JobName[];

export function dubStepJobId(videoJobId: string, step: (typeof DUB_STEPS)[number]): string {
  return `${videoJobId}-${step.split('.').pop()}`;
}

const producers = new WeakMap<Infra, FlowProducer>();

function producer(infra: Infra): FlowProducer {
  let p = producers.get(infra);
  if (!p) {
    p = new FlowProducer({ connection: infra.bullRedis, prefix: queuePrefix(infra.config.REDIS_PREFIX) });
    producers.set(infra, p);
  }
  return p;
}

/**
 * Enqueues a dub job as one BullMQ flow: transcribe → translate → synthesize → lipsync (GPU) → mux, each a child
 * of the next. Job ids derive from the row id, so adding the flow again (reconciler) does not duplicate steps.
 */
export async function enqueueDubFlow(infra: Infra, videoJobId: string): Promise<void> {
  let node: FlowJob | undefined;
  for (const step of DUB_STEPS) {
    const def = catalog[step];
    node = {
      name: step,
      queueName: def.queue,
      data: { videoJobId },
      opts: {
        jobId: dubStepJobId(videoJobId, step),
        attempts: def.attempts,
        backoff: { type: 'exponential', delay: def.backoffMs },
        removeOnComplete: { age: 24 * 3600 },
        removeOnFail: { age: 7 * 24 * 3600 },
      },
      ...(node ? { children: [node] } : {}),
    };
  }
  await producer(infra).add(node!);
}
