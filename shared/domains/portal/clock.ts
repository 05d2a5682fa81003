/**
 * The portal's notion of "now" for code and session expiry. One object per platform, so a test can move time
 * forward (expiry tests without sleeping) by replacing `now`.
 */
export interface Clock {
  now(): number;
}

export function systemClock(): Clock {
  return { now: () => Date.now() };
}
