import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { pinnedCommand, type CpuPinning } from './cpu-affinity.ts';

/**
 * Starts child processes from a small helper process instead of the platform's own thread.
 *
 * Why: `child_process.spawn` forks, and the kernel copies the parent's page tables while the calling thread waits;
 * the wait grows with the parent's resident memory (about 1.5 ms at 50 MB, tens of ms at 400 MB on a loaded
 * machine), and every request and live call on the event loop waits with it. The spawner is a bare Node process
 * (a few tens of MB) started once, early, while the platform is still small: it forks the tools (cheaply), lowers
 * their priority, and hands their stdin/stdout/stderr back over its IPC channel (the descriptors themselves, sent
 * with SCM_RIGHTS), so data flows straight between the tool and the platform; the spawner only relays exit codes
 * and kill requests.
 *
 * `spawnChild` returns an object that behaves as a ChildProcess for what the platform uses: `stdin`/`stdout`/
 * `stderr` exist at once (streams that are joined to the tool's own pipes when they arrive), `pid` is set and
 * 'spawn' emitted when the tool has started, 'error' (ENOENT for a missing binary), 'exit' and 'close' are emitted
 * as Node does, and `kill`, `ref`, `unref`, `exitCode`, `signalCode` work.
 *
 * The spawner kills every tool it started when the platform goes away (its IPC channel closes). When the spawner
 * itself dies, the tools it started are killed by pid, each running one fails with SpawnerExitedError, and the next
 * spawn starts a new spawner.
 */

/** A tool that was running when the spawner process died; the tool has been killed. */
export class SpawnerExitedError extends Error {
  override readonly name = 'SpawnerExitedError';
  constructor(detail: string) {
    super(`the process spawner exited (${detail}); the child process was killed`);
  }
}

type Stdio = 'pipe' | 'ignore';

export interface ChildOptions {
  stdio: [Stdio, Stdio, Stdio];
  /** Linux niceness 0–19, applied by the spawner as soon as the child has started. */
  nice?: number;
  /** Cpus the child runs on (cpu-affinity.ts): it is started through `taskset -c`, which execs it pinned. */
  cpus?: CpuPinning;
}

// CommonJS, run with `node -e`: no file to find at run time (tsx, vitest and a build all work alike).
const SPAWNER_SOURCE = String.raw`
process.title = 'vap-spawner'; // named so in ps, top and the abuse benchmark's CPU profile
const { spawn } = require('node:child_process');
const { setPriority } = require('node:os');
const kids = new Map();
// The platform may be gone between the check and the write (a CLI exiting while a tool exits): the write's EPIPE
// goes to the callback, not to an unhandled 'error' event printed on the platform's stderr; 'disconnect' follows.
const send = (msg, handle) => { if (process.connected) process.send(msg, handle, undefined, () => {}); };
const errInfo = (e) => ({ message: e.message, code: e.code, errno: e.errno, syscall: e.syscall, path: e.path });
process.on('message', (m) => {
  if (m.op === 'kill') {
    const p = kids.get(m.id);
    if (p) try { p.kill(m.signal); } catch {}
    return;
  }
  let p;
  try {
    p = spawn(m.path, m.args, { stdio: m.stdio, env: m.env, cwd: m.cwd });
  } catch (e) {
    send({ op: 'error', id: m.id, error: errInfo(e) });
    return;
  }
  if (p.pid === undefined) {
    for (const s of [p.stdin, p.stdout, p.stderr]) s?.destroy();
    p.once('error', (e) => send({ op: 'error', id: m.id, error: errInfo(e) }));
    return;
  }
  kids.set(m.id, p);
  if (m.nice) try { setPriority(p.pid, Math.min(19, Math.max(0, m.nice))); } catch {}
  p.once('exit', (code, signal) => {
    kids.delete(m.id);
    send({ op: 'exit', id: m.id, code, signal });
  });
  // The pid first: a platform that loses this process kills its tools by pid, whatever else had arrived.
  send({ op: 'spawn', id: m.id, pid: p.pid });
  [p.stdin, p.stdout, p.stderr].forEach((s, fd) => {
    if (!s) return;
    // Not one byte may be read here: the platform reads the pipe once it holds it.
    s._handle.readStop();
    s.on('error', () => {});
    send({ op: 'fd', id: m.id, fd }, s);
  });
});
process.on('disconnect', () => {
  for (const p of kids.values()) try { p.kill('SIGKILL'); } catch {}
  process.exit(0);
});
`;

type FromSpawner =
  | { op: 'spawn'; id: number; pid: number }
  | { op: 'fd'; id: number; fd: 0 | 1 | 2 }
  | { op: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | {
      op: 'error';
      id: number;
      error: { message: string; code?: string; errno?: number; syscall?: string; path?: string };
    };

class Spawner {
  readonly proc: ChildProcess;
  readonly children = new Map<number, RemoteChild>();
  private nextId = 1;
  private refs = 0;
  gone = false;

  constructor(onGone: (s: Spawner) => void) {
    this.proc = spawn(process.execPath, ['--max-old-space-size=64', '-e', SPAWNER_SOURCE], {
      // Not detached: a session of its own would be a scheduling group of its own under autogroup, and the tools
      // would share the CPU equally with the whole platform whatever their niceness (session-priority.ts).
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      // Without the platform's Node options (a loader, --inspect, a large heap): the tools get the full
      // environment with each spawn.
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    this.proc.unref();
    this.proc.on('message', (msg: FromSpawner, handle?: Socket) => {
      const child = this.children.get(msg.id);
      if (child) child.onMessage(msg, handle);
      else handle?.destroy(); // a pipe for a child already settled is closed, not leaked
    });
    const gone = (detail: string) => {
      if (this.gone) return;
      this.gone = true;
      onGone(this);
      this.goneAway(detail);
    };
    this.proc.on('error', (e) => gone(e.message));
    this.proc.on('exit', (code, signal) => gone(signal ?? `status ${code}`));
    this.proc.on('disconnect', () => gone('channel closed'));
    this.updateRef();
  }

  start(child: RemoteChild, path: string, args: string[], opts: ChildOptions): number {
    const id = this.nextId++;
    this.children.set(id, child);
    // The environment and directory as they are now, as child_process.spawn would take them (a few kB).
    const cwd = process.cwd();
    this.proc.send({ op: 'spawn', id, path, args, stdio: opts.stdio, nice: opts.nice ?? 0, env: process.env, cwd });
    return id;
  }

  kill(id: number, signal: NodeJS.Signals): boolean {
    if (this.gone || !this.proc.connected) return false;
    this.proc.send({ op: 'kill', id, signal });
    return true;
  }

  ref(delta: 1 | -1): void {
    this.refs += delta;
    this.updateRef();
  }

  /** The IPC channel keeps the platform alive only while a ref'd child is running, as a ChildProcess would. */
  private updateRef(): void {
    const channel = this.proc.channel as { ref?(): void; unref?(): void } | null | undefined;
    if (this.refs > 0) channel?.ref?.();
    else channel?.unref?.();
  }

  /** Its tools outlive it (re-parented, their pipes still ours): each is killed, and fails. */
  private goneAway(detail: string): void {
    const err = new SpawnerExitedError(detail);
    for (const child of [...this.children.values()]) child.fail(err);
    this.children.clear();
  }
}

let current: Spawner | null = null;

function spawner(): Spawner {
  current ??= new Spawner((s) => {
    if (current === s) current = null;
  });
  return current;
}

/**
 * Starts the spawner now. Call it at boot, before the platform has grown: the spawner is itself forked from the
 * platform once, and that fork is cheapest while the platform is small. Later spawns start it when needed.
 */
export function startSpawner(): void {
  spawner();
}

/** The spawner's pid (for tests and diagnostics); undefined when none is running. */
export function spawnerPid(): number | undefined {
  return current?.gone ? undefined : current?.proc.pid;
}

/** Starts `path` with `args` through the spawner; see the module comment for what the result supports. */
export function spawnChild(path: string, args: string[], opts: ChildOptions): ChildProcess {
  const cmd = opts.cpus ? pinnedCommand(opts.cpus, path, args) : { path, args };
  return new RemoteChild(spawner(), cmd.path, cmd.args, opts) as unknown as ChildProcess;
}

class RemoteChild extends EventEmitter {
  readonly stdin: PassThrough | null;
  readonly stdout: PassThrough | null;
  readonly stderr: PassThrough | null;
  readonly spawnfile: string;
  readonly spawnargs: string[];
  pid: number | undefined = undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  killed = false;
  private readonly id: number;
  private readonly sockets: Socket[] = [];
  private readonly attached = new Set<number>();
  private refd = true;
  private exited = false;
  private openOutputs = 0;
  private closed = false;

  constructor(
    private readonly owner: Spawner,
    path: string,
    args: string[],
    opts: ChildOptions,
  ) {
    super();
    this.spawnfile = path;
    this.spawnargs = [path, ...args];
    this.stdin = opts.stdio[0] === 'pipe' ? new PassThrough() : null;
    this.stdout = opts.stdio[1] === 'pipe' ? new PassThrough() : null;
    this.stderr = opts.stdio[2] === 'pipe' ? new PassThrough() : null;
    for (const out of [this.stdout, this.stderr]) {
      if (!out) continue;
      this.openOutputs++;
      out.once('close', () => {
        this.openOutputs--;
        this.maybeClose();
      });
    }
    owner.ref(1);
    this.id = owner.start(this, path, args, opts);
  }

  get connected(): boolean {
    return false;
  }

  get stdio(): Array<PassThrough | null> {
    return [this.stdin, this.stdout, this.stderr];
  }

  onMessage(msg: FromSpawner, handle?: Socket): void {
    switch (msg.op) {
      case 'spawn':
        this.pid = msg.pid;
        this.emit('spawn');
        return;
      case 'fd':
        if (handle) this.attach(msg.fd, handle);
        return;
      case 'exit':
        this.onExit(msg.code, msg.signal);
        return;
      case 'error': {
        const e = Object.assign(new Error(msg.error.message), msg.error, { spawnargs: this.spawnargs.slice(1) });
        this.endOutputs();
        this.stdin?.destroy();
        this.finish();
        this.emit('error', e);
        this.exited = true;
        this.maybeClose();
      }
    }
  }

  /** Joins our stream to the tool's own pipe end. */
  private attach(fd: 0 | 1 | 2, socket: Socket): void {
    this.sockets.push(socket);
    this.attached.add(fd);
    if (!this.refd) socket.unref();
    const ours = fd === 0 ? this.stdin : fd === 1 ? this.stdout : this.stderr;
    if (!ours || ours.destroyed) {
      socket.destroy();
      return;
    }
    if (fd === 0) {
      // The socket also reads (IPC hands it over readable): nothing comes that way, but it must not hold data.
      socket.resume();
      socket.on('error', (e) => ours.destroy(e));
      socket.on('close', () => ours.destroy());
      // A caller that destroys stdin (not end) still closes the tool's input.
      ours.on('close', () => socket.writableEnded || socket.destroy());
      ours.pipe(socket);
    } else {
      socket.on('error', () => ours.end());
      // A caller that stops reading and destroys the stream closes the pipe, as with Node's own stdio.
      ours.on('close', () => socket.destroy());
      socket.pipe(ours);
    }
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.exitCode = code;
    this.signalCode = signal;
    this.finish();
    this.emit('exit', code, signal);
    this.drainUnread();
    this.exited = true;
    this.maybeClose();
  }

  /** The spawner died: the tool has been killed with its process group. */
  fail(err: Error): void {
    if (this.exited) return;
    if (this.pid !== undefined) {
      try {
        process.kill(this.pid, 'SIGKILL');
      } catch {
        // ESRCH: it had exited already.
      }
    }
    this.signalCode = 'SIGKILL';
    this.finish();
    this.emit('error', err);
    this.endOutputs();
    this.stdin?.destroy();
    this.exited = true;
    this.maybeClose();
  }

  /** Outputs whose pipe never arrived end here; those with a pipe end when the tool's end closes. */
  private endOutputs(): void {
    if (this.stdout && !this.attached.has(1)) this.stdout.end();
    if (this.stderr && !this.attached.has(2)) this.stderr.end();
    this.drainUnread();
  }

  /** As Node's flushStdio: output nobody reads is drained, so 'close' still comes. */
  private drainUnread(): void {
    for (const out of [this.stdout, this.stderr]) {
      if (out && out.readableFlowing === null && out.listenerCount('data') === 0) out.resume();
    }
  }

  private finish(): void {
    if (!this.exited && this.refd) this.owner.ref(-1);
    this.owner.children.delete(this.id);
  }

  private maybeClose(): void {
    if (this.closed || !this.exited || this.openOutputs > 0) return;
    this.closed = true;
    this.emit('close', this.exitCode, this.signalCode);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.exited) return false;
    const sent = this.owner.kill(this.id, signal);
    if (sent) this.killed = true;
    return sent;
  }

  ref(): void {
    if (!this.refd && !this.exited) this.owner.ref(1);
    this.refd = true;
    for (const s of this.sockets) s.ref();
  }

  unref(): void {
    if (this.refd && !this.exited) this.owner.ref(-1);
    this.refd = false;
    for (const s of this.sockets) s.unref();
  }
}
