import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IdleWatch } from '../../workers/realtime/idle-watch.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('idle watch of a media socket', () => {
  it('fires once after the idle time with nothing touched, and not while messages keep coming', () => {
    let fired = 0;
    const w = new IdleWatch(
      1000,
      () => fired++,
      () => Date.now(),
    );
    // A message every 20 ms for 5 s: never idle.
    for (let t = 0; t < 5000; t += 20) {
      vi.advanceTimersByTime(20);
      w.touch();
    }
    expect(fired).toBe(0);
    vi.advanceTimersByTime(999);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(1);
    vi.advanceTimersByTime(10_000);
    expect(fired).toBe(1);
  });

  it('keeps one timer however many messages arrive, and none once stopped', () => {
    const w = new IdleWatch(
      1000,
      () => {},
      () => Date.now(),
    );
    for (let i = 0; i < 500; i++) w.touch();
    expect(vi.getTimerCount()).toBe(1);
    w.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});
