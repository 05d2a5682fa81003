import { performance } from 'node:perf_hooks';

/** How often the calls in progress are checked against the budget. */
const CHECK_MS = 1000;

/**
 * A run's call time as it runs, against its cap (AGENT_TESTS_MAX_CALL_MINUTES): the calls of the results stored
 * (an earlier attempt's included) plus the calls in progress, counted as they go. Once the total passes the cap,
 * `signal` fires: the scenarios in progress hang up and the run ends as `error` (execute.ts). The budget checked at
 * creation is an estimate; this holds whatever the agent and the line really do.
 */
export class CallTimeBudget {
  private readonly over = new AbortController();
  private readonly started = new Map<symbol, number>();
  private usedMs: number;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly capMs: number,
    storedMs: number,
  ) {
    this.usedMs = storedMs;
    this.timer = setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
    this.check();
  }

  /** Fires when the run's call time passes the cap. */
  get signal(): AbortSignal {
    return this.over.signal;
  }

  get exceeded(): boolean {
    return this.over.signal.aborted;
  }

  /** A call starts; the returned function ends it and returns the call time it counted (ms). */
  start(): () => number {
    const id = Symbol('call');
    const at = performance.now();
    this.started.set(id, at);
    return () => {
      this.started.delete(id);
      const ms = performance.now() - at;
      this.usedMs += ms;
      this.check();
      return ms;
    };
  }

  private check(): void {
    if (this.over.signal.aborted) return;
    const now = performance.now();
    let total = this.usedMs;
    for (const at of this.started.values()) total += now - at;
    if (total > this.capMs) this.over.abort(new Error('call time cap'));
  }

  close(): void {
    clearInterval(this.timer);
  }
}
