import type { Queryable } from '../../kernel/db/pool.ts';

/**
 * Records a Stripe event as processed, inside the transaction that applies it (a rollback forgets it, so Stripe's
 * retry runs it again). False when the id was already recorded: a replay, to do nothing about.
 */
export async function recordStripeEvent(
  tx: Queryable,
  event: { id: string; type: string; created: number },
): Promise<boolean> {
  const { rowCount } = await tx.query(
    'insert into stripe_events (id, type, created) values ($1, $2, $3) on conflict (id) do nothing',
    [event.id, event.type, event.created],
  );
  return rowCount !== 0;
}
