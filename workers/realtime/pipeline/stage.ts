import {
  cancels,
  isSystemFrame,
  isUninterruptible,
  type DataFrame,
  type Frame,
  type SystemFrame,
  type UpstreamFrame,
} from './frames.ts';

export type Emit = (frame: Frame) => void;
export type EmitUp = (frame: UpstreamFrame) => void;

/** A signal that never fires, for work nothing cancels (no controller is made per frame). */
const NEVER = new AbortController().signal;

export interface StageOptions {
  /**
   * The stage handles each data frame at once, in the caller's turn, and never awaits (VAD decisions, STT writes,
   * turn taking, playback): no queue, no promise and no AbortController per frame. Default false: data frames are
   * queued and handled one at a time (an LLM stream, a synthesis), each with an AbortSignal.
   */
  sync?: boolean;
  /** Queued work that no interruption cancels (VAD scoring): one shared signal instead of one per frame. */
  cancellable?: boolean;
}

/**
 * A pipeline stage. Data frames are handled in arrival order (a queued stage's `onData` may take a while: an LLM
 * stream, a synthesis). System frames overtake them: `onSystem` runs at once and the frame goes on. `interrupt`
 * and `end` also drop the queued data frames (uninterruptible ones stay) and fire the AbortSignal of the data frame
 * in flight. Unhandled frames pass through. Upstream frames (toward the transport) go through `onUpstream`.
 */
export abstract class Stage {
  readonly name: string;
  private next: Emit = () => {};
  private prev: EmitUp = () => {};
  private readonly queue: DataFrame[] = [];
  private running = false;
  private inflight: AbortController | null = null;
  private ended = false;
  private readonly sync: boolean;
  private readonly cancellable: boolean;
  /** Called when a data handler throws: the stage reports, the pipeline decides. */
  onError: (stage: string, e: unknown) => void = () => {};

  constructor(name: string, opts: StageOptions = {}) {
    this.name = name;
    this.sync = opts.sync ?? false;
    this.cancellable = opts.cancellable ?? true;
  }

  connect(next: Emit, prev?: EmitUp): void {
    this.next = next;
    if (prev) this.prev = prev;
  }

  /** Entry point for frames from upstream (or from outside, for the first stage). */
  push(frame: Frame): void {
    if (isSystemFrame(frame)) {
      this.system(frame);
      return;
    }
    if (this.ended) return;
    if (this.sync) {
      try {
        void this.onData(frame, NEVER);
      } catch (e) {
        this.onError(this.name, e);
      }
      return;
    }
    this.queue.push(frame);
    if (!this.running) void this.drain();
  }

  /** Entry point for frames from downstream. */
  pushUp(frame: UpstreamFrame): void {
    try {
      this.onUpstream(frame);
    } catch (e) {
      this.onError(this.name, e);
    }
  }

  protected emit(frame: Frame): void {
    this.next(frame);
  }

  protected emitUp(frame: UpstreamFrame): void {
    this.prev(frame);
  }

  /** Handle one data frame. Default: pass it on. `signal` fires when an interruption or end cancels it. */
  protected onData(frame: DataFrame, _signal: AbortSignal): Promise<void> | void {
    this.emit(frame);
  }

  /**
   * Reaction to a system frame. The frame is passed on afterwards unless this returns false (the stage emitted it
   * itself, at the point it chose, or consumed it).
   */
  protected onSystem(_frame: SystemFrame): boolean | void {}

  /** Reaction to a frame from downstream. Default: pass it further up. */
  protected onUpstream(frame: UpstreamFrame): void {
    this.emitUp(frame);
  }

  /** Data frames waiting behind the one in flight (how far the stage lags its input). */
  protected get backlog(): number {
    return this.queue.length;
  }

  /** True while a data frame is being handled or waits. */
  get busy(): boolean {
    return this.running || this.queue.length > 0;
  }

  private system(frame: SystemFrame): void {
    if (cancels(frame)) {
      if (this.queue.length) {
        const keep = this.queue.filter(isUninterruptible);
        this.queue.length = 0;
        if (frame.kind !== 'end') this.queue.push(...keep);
      }
      this.inflight?.abort(new Error(frame.kind));
      if (frame.kind === 'end') this.ended = true;
    }
    let forward: boolean | void = true;
    try {
      forward = this.onSystem(frame);
    } catch (e) {
      this.onError(this.name, e);
    }
    if (forward !== false) this.emit(frame);
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const frame = this.queue.shift()!;
        const ac = this.cancellable ? new AbortController() : null;
        this.inflight = ac;
        try {
          await this.onData(frame, ac?.signal ?? NEVER);
        } catch (e) {
          if (!ac?.signal.aborted) this.onError(this.name, e);
        } finally {
          this.inflight = null;
        }
      }
    } finally {
      this.running = false;
    }
  }
}

/**
 * Links stages in order; the last stage's output goes to `sink`, and frames a stage sends upstream reach the
 * stage before it. Everything enters at the head: audio and marks from the transport, a `say` or `end-call` from
 * whoever decides one (stages ahead of the one that handles a frame pass it on).
 */
export class Pipeline {
  constructor(
    readonly stages: Stage[],
    sink: Emit,
    onError: (stage: string, e: unknown) => void,
  ) {
    stages.forEach((s, i) => {
      const next = stages[i + 1];
      const prev = stages[i - 1];
      s.connect(next ? (f) => next.push(f) : sink, prev ? (f) => prev.pushUp(f) : () => {});
      s.onError = onError;
    });
  }

  push(frame: Frame): void {
    this.stages[0]?.push(frame);
  }
}
