import type { ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { createInterface } from 'node:readline';
import { spawnChild } from './spawner.ts';
import { toolPath, type Tool } from './tools.ts';

/**
 * The one way the platform starts a child process (ffmpeg, ffprobe, flite, espeak-ng, pocketsphinx, tesseract,
 * apertium). Every process started here is killed with SIGKILL when the caller's signal aborts or its time limit
 * passes, runs at the requested niceness, and keeps the tail of its stderr for error messages; a consumer that
 * stops reading early kills it, so nothing outlives the request or job that started it. Processes are forked by
 * the spawner process (spawner.ts), never on the platform's event loop: a fork from a large process stalls it.
 */
export interface SpawnOptions {
  signal?: AbortSignal;
  /** Kill the process after this long; it then fails with ProcessTimeoutError. */
  timeoutMs?: number;
  /** Linux niceness 0–19: work nobody waits on yields the CPU to latency-critical work. */
  nice?: number;
  stdin?: 'pipe' | 'ignore';
  stdout?: 'pipe' | 'ignore';
  /** Characters of stderr kept (the last ones: tools print the reason they stopped at the end). Default 8192. */
  stderrLimit?: number;
  /** Called with each stderr line as it arrives (ffmpeg filters such as showinfo report there). */
  onStderrLine?: (line: string) => void;
}

/** A program to run: a tool by name (its configured path) or an explicit path. */
export type Command = Tool | { path: string };

export interface Spawned {
  proc: ChildProcess;
  /** The kept tail of stderr so far. */
  stderr(): string;
  /**
   * Settles when the process has exited and its output is closed: the exit code (null when killed by a signal
   * we did not send). Rejects with the spawn error (ENOENT for a missing binary), the signal's reason after an
   * abort, or ProcessTimeoutError.
   */
  exited: Promise<number | null>;
  /** Whether the process may still be running. */
  running(): boolean;
  kill(): void;
}

/** A process that exited with a non-zero status (or was killed by a signal we did not send). */
export class ProcessExitError extends Error {
  override readonly name = 'ProcessExitError';
  constructor(
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`process exited ${exitCode}`);
  }
}

/** A process killed because it ran past its time limit. */
export class ProcessTimeoutError extends Error {
  override readonly name = 'ProcessTimeoutError';
  constructor(
    readonly command: string,
    readonly timeoutMs: number,
  ) {
    super(`${command} ran longer than ${timeoutMs} ms and was killed`);
  }
}

export function commandPath(cmd: Command): string {
  return typeof cmd === 'string' ? toolPath(cmd) : cmd.path;
}

/** Starts a process; see SpawnOptions. An already-aborted signal throws before anything starts. */
export function spawnProcess(cmd: Command, args: string[], opts: SpawnOptions = {}): Spawned {
  opts.signal?.throwIfAborted();
  const path = commandPath(cmd);
  const proc = spawnChild(path, args, {
    stdio: [opts.stdin ?? 'ignore', opts.stdout ?? 'pipe', 'pipe'],
    nice: opts.nice,
  });
  proc.stdin?.on('error', () => {}); // EPIPE when the tool stops reading early: its exit status tells the story

  const limit = opts.stderrLimit ?? 8192;
  let stderr = '';
  if (opts.onStderrLine) {
    const onLine = opts.onStderrLine;
    createInterface({ input: proc.stderr!, crlfDelay: Infinity }).on('line', (line) => {
      onLine(line);
      stderr = keepTail(stderr, `${line}\n`, limit);
    });
  } else {
    proc.stderr!.on('data', (d: Buffer) => (stderr = keepTail(stderr, d.toString(), limit)));
  }

  let stopped: Error | null = null;
  const kill = () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  };
  const onAbort = () => {
    stopped ??= opts.signal!.reason instanceof Error ? opts.signal!.reason : new Error(String(opts.signal!.reason));
    kill();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const timer =
    opts.timeoutMs === undefined
      ? null
      : setTimeout(() => {
          stopped ??= new ProcessTimeoutError(path, opts.timeoutMs!);
          kill();
        }, opts.timeoutMs);
  timer?.unref();

  const exited = new Promise<number | null>((resolve, reject) => {
    const settle = (err: Error | null, code: number | null) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (timer) clearTimeout(timer);
      if (stopped) reject(stopped);
      else if (err) reject(err);
      else resolve(code);
    };
    proc.once('error', (e) => settle(e, null));
    proc.once('close', (code) => settle(null, code));
  });
  exited.catch(() => {}); // observed by whoever awaits it; an early-stopping consumer no longer cares
  return {
    proc,
    stderr: () => stderr,
    exited,
    running: () => proc.exitCode === null && proc.signalCode === null,
    kill,
  };
}

function keepTail(kept: string, more: string, limit: number): string {
  const all = kept + more;
  return all.length > limit ? all.slice(all.length - limit) : all;
}

export interface RunResult {
  stdout: Buffer;
  stderr: string;
  code: number | null;
}

export interface RunOptions extends Omit<SpawnOptions, 'stdin' | 'stdout'> {
  input?: Buffer | string;
  /** Kill the process and fail when it writes more than this many bytes to stdout. */
  maxStdout?: number;
}

/** A process that wrote more to stdout than the caller accepts. */
export class ProcessOutputLimitError extends Error {
  override readonly name = 'ProcessOutputLimitError';
}

/**
 * Runs a command to completion with optional stdin, collecting stdout. A non-zero exit status resolves (the
 * caller decides what it means); a missing binary, an abort, a time limit or `maxStdout` reject.
 */
export async function runProcess(cmd: Command, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const p = spawnProcess(cmd, args, { ...opts, stdin: opts.input === undefined ? 'ignore' : 'pipe' });
  const out: Buffer[] = [];
  let size = 0;
  let overflow = false;
  p.proc.stdout!.on('data', (d: Buffer) => {
    size += d.length;
    if (opts.maxStdout !== undefined && size > opts.maxStdout) {
      overflow = true;
      p.kill();
    } else out.push(d);
  });
  if (opts.input !== undefined) p.proc.stdin!.end(opts.input);
  const code = await p.exited;
  if (overflow) {
    throw new ProcessOutputLimitError(`${commandPath(cmd)} wrote more than ${opts.maxStdout} bytes`);
  }
  return { stdout: Buffer.concat(out), stderr: p.stderr(), code };
}

/**
 * Runs a command and yields its stdout line by line as it writes them, for tools that report progress as they
 * go (a decoder printing each utterance). Ends when the process has exited: a non-zero status throws
 * ProcessExitError, a missing binary the spawn error, an abort the signal's reason.
 */
export async function* processLines(
  cmd: Command,
  args: string[],
  opts: Omit<SpawnOptions, 'stdout'> = {},
): AsyncGenerator<string> {
  const p = spawnProcess(cmd, args, opts);
  try {
    for await (const line of createInterface({ input: p.proc.stdout!, crlfDelay: Infinity })) yield line;
    const code = await p.exited;
    if (code !== 0) throw new ProcessExitError(code, p.stderr());
  } finally {
    p.kill();
  }
}

/** Best effort: a process that has already exited, or a platform without priorities, keeps its priority. */
export function lowerPriority(pid: number, nice: number): void {
  try {
    setPriority(pid, Math.min(19, Math.max(0, nice)));
  } catch {
    // ESRCH (already exited) or EACCES: the work still runs, only unprioritised.
  }
}
