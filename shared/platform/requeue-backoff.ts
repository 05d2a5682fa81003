import type { Infra } from './infra.ts';

/**
 * Backoff of the jobs the reconciler puts back after they ran out of attempts: doubles per requeue of a job,
 * from the job's own backoff up to five minutes, so an outage is waited out without hammering the dependency.
 * Kept per process: after a restart a job starts from the short delay again, which is harmless.
 */
export class RequeueBackoff {
  private readonly counts = new Map<string, number>();

  next(jobId: string, baseMs: number): number {
    const n = this.counts.get(jobId) ?? 0;
    this.counts.set(jobId, n + 1);
    if (this.counts.size > 10_000) this.counts.delete(this.counts.keys().next().value!);
    return Math.min(5 * 60_000, baseMs * 2 ** n);
  }
}

const perInfra = new WeakMap<Infra, RequeueBackoff>();

export function requeueBackoff(infra: Infra): RequeueBackoff {
  let b = perInfra.get(infra);
  if (!b) perInfra.set(infra, (b = new RequeueBackoff()));
  return b;
}
