import type { MeterInput } from '../../platform/metering/types.ts';

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
