import { isSystemFrame, type DataFrame, type Frame, type SystemFrame } from './frames.ts';

export type Emit = (frame: Frame) => void;

/**
 * A pipeline stage. Data frames are processed one at a time in arrival order (an async `onData` may take a while:
 * an LLM stream, a synthesis). System frames overtake them: `onSystem` runs at once, the queued data frames are
 * dropped on an interruption, and the AbortSignal of the data frame in flight fires. Unhandled frames pass through.
 */
export abstract class Stage {
  readonly name: string;
  private next: Emit = () => {};
  private readonly queue: DataFrame[] = [];
  private running = false;
  private inflight: AbortController | null = null;
  private ended = false;
  /** Called when a data handler throws: the stage reports, the pipeline decides. */
  onError: (stage: string, e: unknown) => void = () => {};

  constructor(name: string) {
    this.name = name;
  }

  connect(next: Emit): void {
    this.next = next;
  }

  /** Entry point for frames from upstream (or from outside, for the first stage). */
  push(frame: Frame): void {
    if (isSystemFrame(frame)) {
      this.system(frame);
      return;
    }
    if (this.ended) return;
    this.queue.push(frame);
    if (!this.running) void this.drain();
  }

  protected emit(frame: Frame): void {
    this.next(frame);
  }

  /** Handle one data frame. Default: pass it on. `signal` fires when an interruption or end cancels it. */
  protected onData(frame: DataFrame, _signal: AbortSignal): Promise<void> | void {
    this.emit(frame);
  }

  /** Reaction to a system frame before it is forwarded (default: nothing extra). */
  protected onSystem(_frame: SystemFrame): void {}

  /** Data frames waiting behind the one in flight (how far the stage lags its input). */
  protected get backlog(): number {
    return this.queue.length;
  }

  /** True while a data frame is being handled or waits. */
  get busy(): boolean {
    return this.running || this.queue.length > 0;
  }

  private system(frame: SystemFrame): void {
    this.queue.length = 0;
    this.inflight?.abort(new Error(frame.kind));
    if (frame.kind === 'end') this.ended = true;
    try {
      this.onSystem(frame);
    } catch (e) {
      this.onError(this.name, e);
    }
    this.emit(frame);
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const frame = this.queue.shift()!;
        const ac = new AbortController();
        this.inflight = ac;
        try {
          await this.onData(frame, ac.signal);
        } catch (e) {
          if (!ac.signal.aborted) this.onError(this.name, e);
        } finally {
          this.inflight = null;
        }
      }
    } finally {
      this.running = false;
    }
  }
}

/** Links stages in order; the last stage's output goes to `sink`. */
export class Pipeline {
  constructor(
    readonly stages: Stage[],
    sink: Emit,
    onError: (stage: string, e: unknown) => void,
  ) {
    stages.forEach((s, i) => {
      const next = stages[i + 1];
      s.connect(next ? (f) => next.push(f) : sink);
      s.onError = onError;
    });
  }

  push(frame: Frame): void {
    this.stages[0]?.push(frame);
  }

  /** Injects a frame at a given stage (e.g. the greeting goes straight to TTS). */
  pushAt(stage: Stage, frame: Frame): void {
    stage.push(frame);
  }
}
