import type { ChildProcess } from 'node:child_process';
import { EngineError } from '../../../kernel/errors/engine-error.ts';
import { spawnChild } from '../../../kernel/process/spawner.ts';
import { EventQueue } from '../vendors/event-queue.ts';
import type { SttStream, SttStreamEvent } from '../types.ts';

export interface PsStreamPoolOptions {
  /** The ps-stream binary (./ps-stream.c, built by scripts/setup.d/41-ps-stream.sh). */
  bin: string;
  /** Its arguments: `--lm`, `--dict`, gate settings, then `--` and the pocketsphinx arguments. */
  args: string[];
  /** Worker processes: each is one thread hosting many calls, so at most one per core is useful. */
  size: number;
}

/** Header of every message both ways: u8 op, u32 LE channel, u32 LE length. */
const HEADER = 9;
/** Audio messages are cut to this size (the helper refuses messages over 1 MiB). */
const MAX_AUDIO = 256 * 1024;

/**
 * The ps-stream worker processes of a process: calls ("channels") are spread over them, the least busy first, and
 * each worker hosts its calls' decoders (./ps-stream.c). A worker is started when a call needs one and is replaced
 * when it dies: its calls' streams fail with a retryable `unavailable`, and the realtime path's reconnecting stream
 * (ReconnectingSttStream, reconnecting.ts) opens a new one, on a new worker, and sends the audio not yet transcribed again.
 */
export class PsStreamPool {
  private readonly workers: PsStreamWorker[] = [];
  private closed = false;
  /** Worker processes started so far (tests watch replacements). */
  started = 0;

  constructor(private readonly opts: PsStreamPoolOptions) {}

  /** Process ids of the live workers. */
  get pids(): number[] {
    return this.workers.map((w) => w.proc.pid).filter((p): p is number => p !== undefined);
  }

  /** Calls open now, over every worker. */
  get channels(): number {
    return this.workers.reduce((n, w) => n + w.channels.size, 0);
  }

  /**
   * Opens a channel: 16 kHz s16le in, partials and finals out. `line` names the kind of audio (the caller's sample
   * rate: calls of one kind start from one another's cepstral mean); `lm` is `"<lm>\t<dict>"` or '' (the general
   * model).
   */
  open(line: string, lm: string, signal?: AbortSignal): SttStream {
    if (this.closed) throw new EngineError('default', 'unavailable', 'local live STT closed', false);
    let worker = this.workers.reduce<PsStreamWorker | null>(
      (best, w) => (best && best.channels.size <= w.channels.size ? best : w),
      null,
    );
    if (!worker || (worker.channels.size > 0 && this.workers.length < this.opts.size)) worker = this.spawn();
    return worker.open(lm ? `${line}\t${lm}` : line, signal);
  }

  /** Ends every worker (their stdin closes; ps-stream exits on EOF); open streams fail. */
  close(): void {
    this.closed = true;
    for (const w of this.workers.splice(0)) w.stop();
  }

  private spawn(): PsStreamWorker {
    this.started++;
    const w = new PsStreamWorker(this.opts, () => {
      const i = this.workers.indexOf(w);
      if (i >= 0) this.workers.splice(i, 1);
    });
    this.workers.push(w);
    return w;
  }
}

/** One ps-stream process and the calls it hosts. */
class PsStreamWorker {
  readonly proc: ChildProcess;
  readonly channels = new Map<number, PsChannel>();
  private nextId = 1;
  private chunks: Buffer[] = [];
  private have = 0;
  private dead = false;

  constructor(
    opts: PsStreamPoolOptions,
    private readonly onExit: () => void,
  ) {
    this.proc = spawnChild(opts.bin, opts.args, { stdio: ['pipe', 'pipe', 'ignore'] });
    this.proc.stdin!.on('error', () => {});
    this.proc.stdout!.on('data', (d: Buffer) => this.onData(d));
    this.proc.on('error', (e) => this.die(`ps-stream failed: ${e.message}`));
    this.proc.on('exit', (code, sig) => this.die(`ps-stream exited (${sig ?? code})`));
    this.ref(false);
  }

  open(what: string, signal?: AbortSignal): SttStream {
    if (this.dead) throw new EngineError('default', 'unavailable', 'ps-stream is not running', true);
    const id = this.nextId++;
    const ch = new PsChannel(id, this, signal);
    this.channels.set(id, ch);
    this.ref(true);
    this.send('O', id, Buffer.from(what.replace(/\0/g, '')));
    return ch;
  }

  send(op: 'O' | 'A' | 'E' | 'C', id: number, body: Buffer = Buffer.alloc(0)): void {
    if (this.dead) return;
    const head = Buffer.alloc(HEADER);
    head[0] = op.charCodeAt(0);
    head.writeUInt32LE(id, 1);
    head.writeUInt32LE(body.length, 5);
    this.proc.stdin!.write(body.length ? Buffer.concat([head, body]) : head);
  }

  /** The channel is done with (closed, or failed): the worker forgets it. */
  release(id: number): void {
    if (!this.channels.delete(id)) return;
    this.send('C', id);
    if (this.channels.size === 0) this.ref(false);
  }

  stop(): void {
    this.dead = true;
    for (const ch of this.channels.values()) ch.fail(new EngineError('default', 'unavailable', 'closed', false));
    this.channels.clear();
    this.proc.stdin!.end();
    this.proc.kill('SIGTERM');
    this.ref(false);
  }

  private onData(d: Buffer): void {
    this.chunks.push(d);
    this.have += d.length;
    let all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    let at = 0;
    while (all.length - at >= HEADER) {
      const len = all.readUInt32LE(at + 5);
      if (all.length - at < HEADER + len) break;
      const op = String.fromCharCode(all[at]!);
      const ch = this.channels.get(all.readUInt32LE(at + 1));
      const body = all.toString('utf8', at + HEADER, at + HEADER + len);
      at += HEADER + len;
      ch?.message(op, body);
    }
    all = all.subarray(at);
    this.chunks = all.length ? [Buffer.from(all)] : [];
    this.have = all.length;
  }

  private die(why: string): void {
    if (this.dead && this.channels.size === 0) return this.exitOnce();
    this.dead = true;
    // Retryable: the call's stream is reopened (on a new worker) and the audio not transcribed yet sent again.
    for (const ch of this.channels.values()) ch.fail(new EngineError('default', 'unavailable', why, true));
    this.channels.clear();
    this.ref(false);
    this.exitOnce();
  }

  private exited = false;
  private exitOnce(): void {
    if (this.exited) return;
    this.exited = true;
    this.onExit();
  }

  /** A worker without calls must not keep the process alive; one with calls must. */
  private ref(ref: boolean): void {
    for (const s of [this.proc.stdin, this.proc.stdout] as Array<{ ref?(): void; unref?(): void } | null>) {
      if (ref) s?.ref?.();
      else s?.unref?.();
    }
    if (ref) this.proc.ref();
    else this.proc.unref();
  }
}

/** One call's stream on a worker. */
class PsChannel implements SttStream {
  readonly events = new EventQueue<SttStreamEvent>();
  private ended = false;
  private readonly onAbort = () => this.fail(new EngineError('default', 'aborted', 'aborted', false));

  constructor(
    private readonly id: number,
    private readonly worker: PsStreamWorker,
    private readonly signal?: AbortSignal,
  ) {
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  write(pcm: Buffer): void {
    if (this.ended || this.events.ended) return;
    for (let at = 0; at < pcm.length; at += MAX_AUDIO) {
      this.worker.send('A', this.id, pcm.subarray(at, Math.min(pcm.length, at + MAX_AUDIO) & ~1));
    }
  }

  end(): void {
    if (this.ended || this.events.ended) return;
    this.ended = true;
    this.worker.send('E', this.id);
  }

  close(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
    this.events.end();
    this.worker.release(this.id);
  }

  /** A message from the worker for this channel. */
  message(op: string, body: string): void {
    if (op === 'P') this.events.push({ type: 'partial', text: body });
    else if (op === 'G') {
      const [decoded, settled] = body.split('\t');
      this.events.push({ type: 'progress', decoded: Number(decoded) / 1000, settled: Number(settled) / 1000 });
    } else if (op === 'F') {
      const [start, end, ...text] = body.split('\t');
      this.events.push({ type: 'final', text: text.join('\t'), start: Number(start) / 1000, end: Number(end) / 1000 });
    } else if (op === 'D') this.close();
    else if (op === 'X') this.fail(new EngineError('default', 'upstream', `local live STT: ${body}`, false));
  }

  fail(e: EngineError): void {
    this.signal?.removeEventListener('abort', this.onAbort);
    this.events.fail(e);
    this.worker.release(this.id);
  }
}
