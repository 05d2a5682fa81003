import type { Frame } from './frames.ts';
import type { Stage } from './stage.ts';

/**
 * Test and benchmark harness: frames in, frames out. Collects what a stage emits and lets the caller wait for a
 * condition on the output instead of sleeping.
 */
export class StageHarness<S extends Stage> {
  readonly out: Frame[] = [];
  readonly errors: unknown[] = [];
  private waiters: Array<() => void> = [];

  constructor(readonly stage: S) {
    stage.connect((f) => {
      this.out.push(f);
      for (const w of this.waiters.splice(0)) w();
    });
    stage.onError = (_name, e) => this.errors.push(e);
  }

  push(...frames: Frame[]): this {
    for (const f of frames) this.stage.push(f);
    return this;
  }

  kinds(): string[] {
    return this.out.map((f) => f.kind);
  }

  /** Resolves once `pred` holds over the collected output. */
  async until(pred: (out: Frame[]) => boolean, timeoutMs = 5000): Promise<Frame[]> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this.out)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`stage ${this.stage.name}: condition not met; got ${this.kinds().join(',')}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.out;
  }
}
