import type { SpendingCaps, SpendingCapsBody } from '../../shared/contracts/billing.ts';
import { creditsSince } from '../../shared/platform/metering/ledger-reads.ts';
import { readSpendingCaps, utcDayStart, writeSpendingCap } from '../../shared/domains/billing/spending-caps.ts';
import { lockActiveKey } from '../../shared/kernel/db/api-keys.ts';
import { withTransaction } from '../../shared/kernel/db/pool.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import type { Infra } from '../../shared/platform/infra.ts';

/** The caps and today's spend under each. */
export async function spendingCaps(infra: Infra, developerId: string): Promise<SpendingCaps> {
  const caps = await readSpendingCaps(infra.db, developerId);
  const since = utcDayStart();
  return {
    dailyCredits: caps.dailyCredits,
    spentToday: await creditsSince(infra.db, developerId, since),
    keys: await Promise.all(
      caps.keys.map(async (k) => ({ ...k, spentToday: await creditsSince(infra.db, developerId, since, k.keyId) })),
    ),
    day: since.toISOString().slice(0, 10),
  };
}

/**
 * PUT: sets the caps given (a number), removes those given as null, leaves the rest. A key that is not the
 * developer's (or is revoked) is 404, and nothing is changed.
 */
export async function updateSpendingCaps(
  infra: Infra,
  developerId: string,
  body: SpendingCapsBody,
): Promise<SpendingCaps> {
  await withTransaction(infra.db, async (tx) => {
    for (const k of body.keys ?? []) {
      if (!(await lockActiveKey(tx, developerId, k.keyId))) throw ApiError.notFound('api_key', k.keyId);
      await writeSpendingCap(tx, developerId, k.keyId, k.dailyCredits);
    }
    if (body.dailyCredits !== undefined) await writeSpendingCap(tx, developerId, null, body.dailyCredits);
  });
  return spendingCaps(infra, developerId);
}
