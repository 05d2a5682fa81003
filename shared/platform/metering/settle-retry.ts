import { setTimeout as sleep } from 'node:timers/promises';
import { isTransientDependencyError } from '../../kernel/errors/retry.ts';
import type { Logger } from '../../kernel/observability/logger.ts';

/** Waits before each further try of a hold's settlement: about 3.5 s in all, the length of a Postgres restart. */
const DELAYS_MS = [100, 400, 1000, 2000];

/**
 * Runs a settlement (commit or refund of a hold) and retries it while the database is briefly unavailable. A
 * failure that is not transient, or one that outlasts the retries, is logged with the hold and thrown.
 */
export async function settleWithRetry<T>(
  what: 'commit' | 'refund',
  ledgerId: string,
  log: Logger,
  fn: () => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      const transient = isTransientDependencyError(e);
      if (!transient || attempt >= DELAYS_MS.length) {
        log.error({ ledgerId, what, err: (e as Error).message, attempts: attempt + 1 }, 'hold settlement failed');
        throw e;
      }
      log.warn({ ledgerId, what, err: (e as Error).message, attempt: attempt + 1 }, 'hold settlement retrying');
      await sleep(DELAYS_MS[attempt]);
    }
  }
}
