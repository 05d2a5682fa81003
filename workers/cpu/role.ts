import type { Infra } from '../../shared/platform/infra.ts';
import { runWorker, type RunningWorker } from '../../shared/kernel/queue/worker-runner.ts';
import type { QueueName } from '../../shared/kernel/queue/define.ts';
import type { StartPrivatePlatform } from '../../shared/domains/agent-tests/execute.ts';
import { cpuHandlers } from './handlers.ts';

/**
 * The CPU pool: transcription, ffmpeg muxing, dubbing steps, ingest, webhooks, outbound-call dispatch (queue `cpu`),
 * and agent test runs and call replays (queue `cpu-tests`). Each queue has its own worker and concurrency: a test
 * run or a replay plays real-time calls for minutes, and on one shared worker two of them held every slot while a
 * transcription or a campaign's first dial waited behind them. `privatePlatform` starts the private api + realtime
 * pair those two play their calls on; the composition root (scripts/platform.ts) passes it in, since a role may not
 * load other roles itself. `queues` picks which of the two this process consumes: the one-process mode plays the
 * test pool in a process of its own at lower priority (scripts/tests-process.ts), away from the live calls.
 */
export function startCpuWorkers(
  infra: Infra,
  privatePlatform?: StartPrivatePlatform,
  queues: { cpu: boolean; tests: boolean } = { cpu: true, tests: true },
): RunningWorker[] {
  const handlers = cpuHandlers(infra, privatePlatform);
  const worker = (queue: QueueName, concurrency: number) =>
    runWorker(queue, handlers, {
      redis: infra.bullRedis,
      prefix: infra.config.REDIS_PREFIX,
      stalledIntervalMs: infra.config.WORKER_STALLED_INTERVAL_MS,
      concurrency,
      log: infra.log.child({ role: 'worker-cpu' }),
    });
  return [
    ...(queues.cpu ? [worker('cpu', infra.config.WORKER_CPU_CONCURRENCY)] : []),
    ...(queues.tests ? [worker('cpu-tests', infra.config.WORKER_TESTS_CONCURRENCY)] : []),
  ];
}
