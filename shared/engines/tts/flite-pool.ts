import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { CpuPinning } from '../../kernel/process/cpu-affinity.ts';
import { spawnChild } from '../../kernel/process/spawner.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { FairQueue, type WorkOwner } from '../core/fair-queue.ts';

/** One synthesis: flite voice name, duration stretch, f0 shift (0 = the voice's own) and the text. */
export interface FliteJob {
  voice: string;
  stretch: number;
  f0Shift: number;
  text: string;
}

export interface FliteResult {
  sampleRate: number;
  /** Mono s16le PCM. */
  pcm: Buffer;
}

export interface FlitePoolOptions {
  /**
   * The worker binary, and its arguments (tests only): flite-server (shared/engines/tts/flite-server/flite-server.c)
   * or rhvoice-server (shared/engines/tts/rhvoice-server/rhvoice-server.c), which speaks the same protocol.
   */
  bin: string;
  /** The engine whose errors these are (default `default`), and the worker's name in them (default flite-server). */
  provider?: string;
  name?: string;
  args?: string[];
  /** Long-lived worker processes; each synthesizes one request at a time. */
  size: number;
  /** Niceness of the workers (background synthesis runs on a pool at 10). */
  nice?: number;
  /** Cpus the workers run on (the batch pool: every core but the live work's, cpu-affinity.ts); default any. */
  cpus?: CpuPinning;
  /** A request not answered within this long is taken as a hang: the worker is killed and replaced. */
  timeoutMs?: (job: FliteJob) => number;
  /**
   * CPU time (user + system, ms) a request may use before its worker is killed and replaced and the request fails
   * with `too_costly` (default FLITE_CPU_DEADLINE). CPU time, not wall time, so a busy machine never trips it.
   */
  cpuDeadlineMs?: (job: FliteJob) => number;
  /** How often a busy worker's CPU time is read (ms; default 100). Requests that finish sooner are never read. */
  cpuCheckMs?: number;
  /** Workers batch work may never take, kept for live work (default 0): batch runs on at most size - liveReserve. */
  liveReserve?: number;
}

/** The CPU deadline of a flite request: `baseMs` plus `perCharMs` a character of its text (docs/speech.md). */
export function cpuDeadline(baseMs: number, perCharMs: number): (job: FliteJob) => number {
  return (job) => baseMs + perCharMs * job.text.length;
}

/**
 * Default CPU deadline: 1 s plus 50 ms a character (SPEECH_FLITE_CPU_BASE_MS, SPEECH_FLITE_CPU_MS_PER_CHAR).
 * Measured here (flite 2.2, one core): ordinary prose takes under 1 ms a character (a 100-character sentence: 16 ms
 * with kal16, 86 ms with slt); the slowest real text found, a run of four-digit numbers, 22 ms (slt) to 27 ms (rms)
 * a character. The deadline is about twice that; spelling out a run of thousands of letters, which grows faster
 * than its length, passes it.
 */
export const FLITE_CPU_DEADLINE = cpuDeadline(1000, 50);

interface Pending {
  job: FliteJob;
  resolve(r: FliteResult): void;
  reject(e: unknown): void;
  /** Cancelled while in flight: the worker's answer is read and thrown away. */
  discarded: boolean;
  /** For a live call (FairQueue's first lane). */
  live: boolean;
  signal?: AbortSignal;
  onAbort?: () => void;
}

const HEADER = 12;
/** Flite renders a sentence in tens of milliseconds; ten seconds plus 20 ms a character is far past any real one. */
const defaultTimeout = (job: FliteJob) => 10_000 + 20 * job.text.length;
/** How often a worker past its hang timeout is looked at again while it keeps using CPU. */
const HANG_RECHECK_MS = 5000;
/** A worker that dies sooner than this after it started is replaced on demand, not at once (no crash loop). */
const MIN_LIFE_MS = 1000;

/**
 * A pool of long-lived flite-server processes: requests are written to an idle worker's stdin and its PCM read back
 * from stdout, so no process is created per sentence (on some VMs process creation cost 40 % of the CPU in the
 * kernel). Requests wait when every worker is busy, taken in FairQueue order: live calls first, then the developer
 * served least recently. A worker that dies is replaced (its request fails); one that does not answer in time, or
 * uses more CPU than the request's deadline allows, is killed and replaced. Cancelling a waiting request removes it; cancelling one
 * in flight rejects it at once and discards the audio when the worker finishes (a sentence takes milliseconds,
 * a respawn would cost more).
 */
export class FlitePool {
  private readonly workers = new Set<FliteWorker>();
  private readonly queue = new FairQueue<Pending>();
  private closed = false;
  /** Worker processes started so far (tests watch replacements). */
  started = 0;

  constructor(private readonly opts: FlitePoolOptions) {}

  /** Process ids of the live workers. */
  get pids(): number[] {
    return [...this.workers].map((w) => w.proc.pid).filter((p): p is number => p !== undefined);
  }

  /** Synthesizes `job` on the next free worker; `owner` places it in the queue (live first, fair by developer). */
  synthesize(job: FliteJob, signal?: AbortSignal, owner: WorkOwner = {}): Promise<FliteResult> {
    if (this.closed) return Promise.reject(this.closedError());
    signal?.throwIfAborted();
    return new Promise<FliteResult>((resolve, reject) => {
      const p: Pending = { job, resolve, reject, discarded: false, signal, live: owner.live === true };
      if (signal) {
        p.onAbort = () => {
          if (!this.queue.remove(p)) p.discarded = true;
          reject(signal.reason);
        };
        signal.addEventListener('abort', p.onAbort, { once: true });
      }
      this.queue.push(p, owner);
      this.pump();
    });
  }

  /** Requests being answered now. */
  get running(): number {
    return [...this.workers].filter((w) => w.busy).length;
  }

  /** Starts the workers now, so the first request does not wait for a process start. */
  warm(): void {
    while (!this.closed && this.workers.size < this.opts.size) this.spawn();
  }

  /** Ends every worker (their stdin closes; flite-server exits on EOF) and fails what waits. */
  close(): void {
    this.closed = true;
    for (const p of this.queue.drain()) p.reject(this.closedError());
    for (const w of this.workers) w.stop();
    this.workers.clear();
  }

  private closedError(): EngineError {
    return new EngineError(
      this.opts.provider ?? 'default',
      'unavailable',
      `${workerName(this.opts)} pool closed`,
      false,
    );
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.closed) {
      let idle = [...this.workers].find((w) => !w.busy);
      if (!idle && this.workers.size < this.opts.size) idle = this.spawn();
      if (!idle) return;
      const batchRunning = [...this.workers].filter((w) => w.busy && !w.busy.live).length;
      const next = this.queue.shift({ liveOnly: batchRunning >= this.opts.size - (this.opts.liveReserve ?? 0) });
      if (!next) return;
      idle.run(next);
    }
  }

  private spawn(): FliteWorker {
    this.started++;
    const w = new FliteWorker(this.opts, () => {
      this.workers.delete(w);
      // Replace a worker that was killed or had been running; one that exits by itself at start is replaced only
      // when a request needs it, so a broken binary fails requests instead of looping.
      if (!this.closed && (this.queue.length > 0 || w.killed || w.livedMs >= MIN_LIFE_MS)) {
        if (this.queue.length > 0) this.pump();
        else this.spawn();
      }
    });
    w.onIdle = () => this.pump();
    this.workers.add(w);
    return w;
  }
}

function workerName(opts: FlitePoolOptions): string {
  return opts.name ?? 'flite-server';
}

/** One flite-server (or rhvoice-server) process and the request it is answering. */
class FliteWorker {
  readonly proc: ChildProcess;
  busy: Pending | null = null;
  /** Ended by a signal (killed: OOM killer, an operator, our hang timeout) rather than exiting on its own. */
  killed = false;
  onIdle: () => void = () => {};
  private readonly startedAt = Date.now();
  private chunks: Buffer[] = [];
  private have = 0;
  /** Header and body bytes of the answer being read, once its header is in. */
  private expected: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private cpuTimer: NodeJS.Timeout | null = null;
  private dead = false;

  constructor(
    private readonly opts: FlitePoolOptions,
    private readonly onExit: () => void,
  ) {
    this.proc = spawnChild(opts.bin, opts.args ?? [], {
      stdio: ['pipe', 'pipe', 'ignore'],
      nice: opts.nice,
      cpus: opts.cpus,
    });
    this.proc.stdin!.on('error', () => {});
    this.proc.stdout!.on('data', (d: Buffer) => this.onData(d));
    this.proc.on('error', (e) => this.die(`${this.name} failed: ${e.message}`));
    this.proc.on('exit', (code, sig) => {
      this.killed = sig !== null;
      this.die(`${this.name} exited (${sig ?? code})`);
    });
    this.idleRef(false);
  }

  private get name(): string {
    return workerName(this.opts);
  }

  private get provider(): string {
    return this.opts.provider ?? 'default';
  }

  get livedMs(): number {
    return Date.now() - this.startedAt;
  }

  run(p: Pending): void {
    this.busy = p;
    this.idleRef(true);
    const body = Buffer.from(
      `${p.job.voice}\t${p.job.stretch.toFixed(3)}\t${p.job.f0Shift}\t${p.job.text.replace(/\0/g, ' ')}`,
    );
    const len = Buffer.alloc(4);
    len.writeUInt32LE(body.length);
    this.proc.stdin!.write(Buffer.concat([len, body]));
    this.armHang(
      p,
      // A hang is waiting with no answer; never shorter than twice the CPU deadline, which is the work's own bound.
      this.opts.timeoutMs?.(p.job) ??
        Math.max(defaultTimeout(p.job), 2 * (this.opts.cpuDeadlineMs ?? FLITE_CPU_DEADLINE)(p.job)),
      null,
    );
    this.watchCpu(p);
  }

  /**
   * Fails the request and kills the worker as hung once `ms` pass without an answer, unless it has made progress
   * since the last look — used CPU, or sent answer bytes — or has not started yet: then it is working, only slowly
   * (a loaded machine, a niced pool; issue #35: long legal syntheses were cut midway under load), and is looked at
   * again HANG_RECHECK_MS later. Its work stays bounded by the CPU deadline. The first look has nothing to compare
   * with, so a worker is taken as hung one recheck after the timeout at the earliest; where /proc cannot be read, at
   * the timeout. Each look waits for the event loop's I/O phase first: timers run before reads in a turn of the
   * loop, and an answer that came in while the loop was busy is not a hang (nor is a worker blocked writing it).
   */
  private armHang(p: Pending, ms: number, last: { cpu: number; have: number } | null): void {
    this.timer = setTimeout(
      () =>
        setImmediate(() => {
          if (this.busy !== p) return;
          const pid = this.proc.pid;
          // The spawner has not sent the worker's pid yet (a busy machine). A worker that cannot start ends with
          // 'error' or 'exit', which fails the request.
          if (pid === undefined) return this.armHang(p, HANG_RECHECK_MS, null);
          const cpu = cpuMs(pid);
          const now = cpu === null ? null : { cpu, have: this.have };
          if (now && (!last || now.cpu > last.cpu || now.have > last.have)) {
            return this.armHang(p, HANG_RECHECK_MS, now);
          }
          this.fail(new EngineError(this.provider, 'timeout', `${this.name} did not answer in time`, true));
          this.proc.kill('SIGKILL');
        }),
      ms,
    );
  }

  /**
   * Reads this worker's CPU time every cpuCheckMs while it answers; past the request's CPU deadline the request
   * fails (`too_costly`: the text, not the machine, made it long) and the process is killed, which stops the work
   * at once (flite cannot be interrupted inside one utterance). Nothing is read where /proc is not there.
   */
  private watchCpu(p: Pending): void {
    const pid = this.proc.pid;
    if (pid === undefined) {
      // A worker forked a moment ago (by the spawner): its pid comes with 'spawn'; the request may be done by then.
      this.proc.once('spawn', () => this.busy === p && this.watchCpu(p));
      return;
    }
    const job = p.job;
    const deadline = (this.opts.cpuDeadlineMs ?? FLITE_CPU_DEADLINE)(job);
    const every = this.opts.cpuCheckMs ?? 100;
    // Most sentences are done before the first check: nothing is read for them (a live call's reply is a few
    // such requests a turn). At the first check the process is taken to have used the whole interval's CPU
    // already (one core at most), which can only stop a piece earlier, never later.
    let start: number | null = null;
    this.cpuTimer = setInterval(() => {
      const now = cpuMs(pid);
      if (now === null) return;
      if (start === null) start = now - every;
      if (now - start <= deadline) return;
      this.fail(
        EngineError.invalidInput(
          this.provider,
          'too_costly',
          `text: synthesis used more than its CPU allowance (${Math.round(deadline)} ms for ${job.text.length} ` +
            'characters) and was stopped; the work done is charged. Split long runs of letters or digits into words',
          'text',
        ),
      );
      this.proc.kill('SIGKILL');
    }, every);
    this.cpuTimer.unref();
  }

  stop(): void {
    this.dead = true;
    this.proc.stdin!.end();
    // flite-server exits on EOF; a hung one would not, and nothing it holds is worth waiting for.
    this.proc.kill('SIGTERM');
    this.idleRef(false);
  }

  /**
   * The answer is read as it comes, in pipe reads of up to 64 KiB, and joined once, when it is whole: the header is
   * joined as soon as it is in (its body's length), the body's reads are kept apart and copied into one buffer at
   * the end. Joining everything read so far at each read copied a long answer once a read (a 200-character piece of
   * four-digit numbers: ~1.8 MB of samples in ~30 reads, ~30 MB copied), and the garbage of it cost full collections
   * on the event loop the platform's API and live calls share (issue #35, benchmarks/abuse/README.md).
   */
  private onData(d: Buffer): void {
    this.chunks.push(d);
    this.have += d.length;
    if (this.expected === null) {
      if (this.have < HEADER) return;
      const head = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
      this.chunks = [head];
      this.expected = HEADER + head.readUInt32LE(8);
    }
    if (this.have < this.expected) return;
    if (this.have > this.expected) {
      // The protocol is one answer per request: more means the process is confused. Replace it.
      this.fail(new EngineError(this.provider, 'upstream', `${this.name} wrote past its answer`, false));
      this.proc.kill('SIGKILL');
      return;
    }
    const [head, ...rest] = this.chunks as [Buffer, ...Buffer[]];
    // Its own memory (not a slice of a pooled or larger buffer), filled whole below.
    const body = Buffer.allocUnsafeSlow(this.expected - HEADER);
    let at = head.copy(body, 0, HEADER);
    for (const c of rest) at += c.copy(body, at);
    this.chunks = [];
    this.have = 0;
    this.expected = null;
    const status = head.readInt32LE(0);
    const p = this.finish();
    if (p && status === 0) p.resolve({ sampleRate: head.readUInt32LE(4), pcm: body });
    else if (p) p.reject(new EngineError(this.provider, 'upstream', `${this.name}: ${body.toString()}`, false));
    this.onIdle();
  }

  /** Ends the current request; returns it when someone still waits for its answer. */
  private finish(): Pending | null {
    const p = this.busy;
    this.busy = null;
    if (this.timer) clearTimeout(this.timer);
    if (this.cpuTimer) clearInterval(this.cpuTimer);
    this.timer = null;
    this.cpuTimer = null;
    this.idleRef(false);
    if (!p) return null;
    if (p.onAbort) p.signal?.removeEventListener('abort', p.onAbort);
    return p.discarded ? null : p;
  }

  private fail(e: unknown): void {
    this.finish()?.reject(e);
  }

  private die(why: string): void {
    if (this.dead && !this.busy) {
      this.onExitOnce();
      return;
    }
    this.dead = true;
    this.fail(new EngineError(this.provider, 'unavailable', why, true));
    this.onExitOnce();
  }

  private exited = false;
  private onExitOnce(): void {
    if (this.exited) return;
    this.exited = true;
    this.onExit();
  }

  /** An idle worker must not keep the process alive; one answering a request must. */
  private idleRef(ref: boolean): void {
    for (const s of [this.proc.stdin, this.proc.stdout] as Array<{ ref?(): void; unref?(): void } | null>) {
      if (ref) s?.ref?.();
      else s?.unref?.();
    }
    if (ref) this.proc.ref();
    else this.proc.unref();
  }
}

/** Linux reports process CPU time in clock ticks of 1/100 s (USER_HZ, the same on every architecture). */
const MS_PER_TICK = 10;

/** User + system CPU time of a process in ms, from /proc/<pid>/stat; null where it cannot be read. */
function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after the command name (which may hold spaces), from field 3: utime is field 14, stime 15.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]);
    return Number.isFinite(ticks) ? ticks * MS_PER_TICK : null;
  } catch {
    return null;
  }
}
