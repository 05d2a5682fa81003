import type { Config } from '../../kernel/config/index.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import type { MeterInput } from '../../platform/metering/types.ts';
import { creditWeights } from '../../platform/metering/weights.ts';

/**
 * The hold a voice session takes when it starts: its first connected minute (settled to the real length at the end).
 * Creating a session token takes and returns the same hold, so a developer out of credits gets a 402 while their
 * server can still answer the call itself, not a socket that closes on the caller.
 */
export function sessionMinuteHold(developerId: string, sessionId: string, channel: string): MeterInput {
  return {
    developerId,
    category: 'session',
    units: 1,
    unit: 'connected minutes',
    provider: channel,
    billable: true,
    requestId: sessionId,
    operation: 'session.minutes',
  };
}

/**
 * SQL: whether the session `sessionId` (an SQL expression) holds its first connected minute in the ledger, reserved
 * or charged (a refunded hold does not count). The campaign claim counts an attempt as placed until it does.
 */
export function sessionMinuteHeldSql(sessionId: string): string {
  return `exists (select 1 from credit_ledger l where l.request_id = ${sessionId}
                    and l.operation = 'session.minutes' and l.status <> 'refunded')`;
}

/** The least a voice call costs: its first connected minute, charged whatever the call's length. */
export function minimumCallCredits(config: Config): number {
  const m = sessionMinuteHold('', '', '');
  return creditWeights(config).credits(m.category, m.operation, m.units);
}

/**
 * 400 `validation_failed` for a per-call `maxDurationSeconds` below one connected minute plus one reply
 * (`REALTIME_MIN_CALL_SECONDS`, default 90; issue #33): a shorter cap ends a call before its first answer is heard
 * out, and the first minute is charged whatever the cap. The message names the minimum.
 */
export function requireCoverableCallDuration(
  config: Config,
  maxDurationSeconds: number | null | undefined,
  param: string,
): void {
  if (maxDurationSeconds === null || maxDurationSeconds === undefined) return;
  const min = config.REALTIME_MIN_CALL_SECONDS;
  if (maxDurationSeconds < min)
    throw ApiError.validation(
      `maxDurationSeconds must be at least ${min}: one connected minute plus one reply and its goodbye; ` +
        'raise the cap or leave it out.',
      param,
    );
}

/**
 * 400 `validation_failed` for a per-call `maxCredits` below one connected minute: every call is charged its first
 * minute, so such a cap could never hold (a cap of 5 was charged 20). The message names the minimum.
 */
export function requireCoverableCallCap(config: Config, maxCredits: number | null | undefined, param: string): void {
  if (maxCredits === null || maxCredits === undefined) return;
  const min = minimumCallCredits(config);
  if (maxCredits < min)
    throw ApiError.validation(
      `maxCredits must be at least ${min}: every call is charged its first connected minute (${min} credits); ` +
        'raise the cap or leave it out.',
      param,
    );
}
