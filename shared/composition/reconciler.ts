import { reconcileCallReplays } from '../domains/agent-tests/replay/reconcile.ts';
import { sweepHolds } from '../domains/billing/hold-sweeper.ts';
import { reconcileCampaigns } from '../domains/campaigns/reconcile.ts';
import type { Logger } from '../kernel/observability/logger.ts';
import type { Infra } from '../platform/infra.ts';
import { heldTranscriptionJobSql } from '../domains/speech/transcription-store.ts';
import { chargeUnchargedJobs } from '../domains/video/billing.ts';
import { heldVideoJobSql } from '../domains/video/store.ts';
import { reconcileVideoJobs } from '../domains/video/reconciler.ts';
import { reconcileTestRuns } from '../domains/agent-tests/reconcile.ts';
import {
  reconcileDialTasks,
  reconcileTranscriptions,
  reconcileWebhooks,
  scheduleOverageReport,
} from './reconcile-kinds.ts';

/** One pass: each part on its own, so one failing (its table locked, a bug) does not stop the others. */
export async function reconcileOnce(infra: Infra, log: Logger = infra.log): Promise<Record<string, unknown>> {
  const c = infra.config;
  const parts: Record<string, () => Promise<unknown>> = {
    transcriptions: () => reconcileTranscriptions(infra),
    video: () => reconcileVideoJobs(infra),
    webhooks: () => reconcileWebhooks(infra),
    dials: () => reconcileDialTasks(infra),
    campaigns: () => reconcileCampaigns(infra),
    agentTests: () => reconcileTestRuns(infra),
    replays: () => reconcileCallReplays(infra),
    overage: () => scheduleOverageReport(infra),
    holds: () =>
      sweepHolds(infra, {
        afterMs: c.RECONCILE_AFTER_MS,
        unkeyedAfterMs: c.HOLD_SWEEP_AFTER_MS,
        // Every job table a hold key can name: a keyed hold whose job no subquery finds is refunded.
        jobs: [heldTranscriptionJobSql, heldVideoJobSql],
      }),
    charges: () => chargeUnchargedJobs(infra, c.RECONCILE_AFTER_MS),
  };
  const out: Record<string, unknown> = {};
  for (const [name, run] of Object.entries(parts)) {
    try {
      out[name] = await run();
    } catch (e) {
      // Postgres or Redis down: nothing to do but try again next tick.
      out[name] = { error: (e as Error).message };
      log.warn({ part: name, err: (e as Error).message }, 'reconcile part failed; retrying next tick');
    }
  }
  return out;
}

export interface RunningReconciler {
  stop(): Promise<void>;
}

/**
 * Postgres is the source of truth for every asynchronous job; Redis only carries the queue. Every worker
 * process runs this on a plain timer (nothing in Redis to install or lose): every RECONCILE_INTERVAL_MS it
 * puts back accepted jobs whose queue entry is gone or ran out of attempts waiting for a dependency (transcription,
 * video and dub flows, webhook deliveries, outbound calls), adds the Stripe overage report of the current window,
 * charges completed jobs left uncharged and settles credit holds left reserved. Everything it does is idempotent
 * (deterministic job ids, conditional updates), so replicas running it at once do each thing once. While Postgres
 * or Redis is down a pass fails or waits, and the next one retries.
 */
export function startReconciler(infra: Infra): RunningReconciler {
  const log = infra.log.child({ component: 'reconciler' });
  const interval = infra.config.RECONCILE_INTERVAL_MS;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | null = null;
  const tick = async (): Promise<void> => {
    running = reconcileOnce(infra, log);
    await running;
    running = null;
    if (!stopped) timer = setTimeout(tick, interval);
  };
  // Replicas started together spread their passes over the interval.
  timer = setTimeout(tick, Math.floor(Math.random() * Math.min(interval, 5000)));
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      // A pass waiting for Redis to come back must not hold up shutdown.
      if (running) await Promise.race([running, new Promise((r) => setTimeout(r, 2000).unref())]);
    },
  };
}
