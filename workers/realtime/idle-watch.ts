import { performance } from 'node:perf_hooks';

/**
 * Calls `onIdle` once nothing has been `touch`ed for `ms`. A media socket touches it on every message (50 a second
 * per call), so touching only stamps the time; the one timer, when it fires early, re-arms itself for what is left,
 * instead of a timer being moved in the timer list per message.
 */
export class IdleWatch {
  private last: number;
  private timer: NodeJS.Timeout | null;

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
    /** A monotonic clock (ms). */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.last = now();
    this.timer = setTimeout(() => this.check(), ms).unref();
  }

  touch(): void {
    this.last = this.now();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private check(): void {
    if (!this.timer) return;
    const quiet = this.now() - this.last;
    if (quiet >= this.ms) {
      this.timer = null;
      this.onIdle();
      return;
    }
    this.timer = setTimeout(() => this.check(), this.ms - quiet).unref();
  }
}
