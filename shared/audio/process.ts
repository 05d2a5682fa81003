import { spawn, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { createInterface } from 'node:readline';

export interface RunResult {
  stdout: Buffer;
  stderr: string;
  code: number | null;
}

/**
 * Runs a command to completion with optional stdin, collecting stdout. Aborting the signal kills the process and
 * rejects with the signal's reason. A missing binary rejects with the spawn error (ENOENT). `nice` lowers the
 * process's CPU priority (Linux niceness, 0–19) so it yields to latency-critical work.
 */
export function runProcess(
  cmd: string,
  args: string[],
  opts: { input?: Buffer | string; signal?: AbortSignal; nice?: number } = {},
): Promise<RunResult> {
  opts.signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const { proc, stderr } = startTool(cmd, args, opts, opts.input !== undefined);
    const out: Buffer[] = [];
    proc.stdout!.on('data', (d: Buffer) => out.push(d));
    proc.on('error', (e) => reject(opts.signal?.aborted ? opts.signal.reason : e));
    proc.on('close', (code) => {
      if (opts.signal?.aborted) return reject(opts.signal.reason);
      resolve({ stdout: Buffer.concat(out), stderr: stderr(), code });
    });
    if (opts.input !== undefined) {
      proc.stdin!.on('error', () => {});
      proc.stdin!.end(opts.input);
    }
  });
}

/**
 * Spawns a tool with stdout and stderr piped (stdin too when asked), killed with SIGKILL when `signal` aborts,
 * at the requested niceness; stderr is kept (the first 8 KB) for error messages.
 */
function startTool(
  cmd: string,
  args: string[],
  opts: { signal?: AbortSignal; nice?: number },
  stdin: boolean,
): { proc: ChildProcess; stderr: () => string } {
  const proc = spawn(cmd, args, {
    stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    signal: opts.signal,
    killSignal: 'SIGKILL',
  });
  if (opts.nice && proc.pid !== undefined) lowerPriority(proc.pid, opts.nice);
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => {
    if (stderr.length < 8192) stderr += d.toString();
  });
  return { proc, stderr: () => stderr };
}

/** Best effort: a process that has already exited, or a platform without priorities, keeps its priority. */
export function lowerPriority(pid: number, nice: number): void {
  try {
    setPriority(pid, Math.min(19, Math.max(0, nice)));
  } catch {
    // ESRCH (already exited) or EACCES: the work still runs, only unprioritised.
  }
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

/**
 * Runs a command and yields its stdout line by line as it writes them, for tools that report progress as they
 * go (a decoder printing each utterance). Ends when the process has exited: a non-zero status throws
 * ProcessExitError, a missing binary the spawn error, an abort the signal's reason. A consumer that stops early
 * kills the process, so nothing outlives the request that started it.
 */
export async function* processLines(
  cmd: string,
  args: string[],
  opts: { signal?: AbortSignal; nice?: number } = {},
): AsyncGenerator<string> {
  opts.signal?.throwIfAborted();
  const { proc, stderr } = startTool(cmd, args, opts, false);
  const exit = new Promise<number | null>((resolve, reject) => {
    proc.on('error', (e) => reject(opts.signal?.aborted ? opts.signal.reason : e));
    proc.on('close', (code) => (opts.signal?.aborted ? reject(opts.signal.reason) : resolve(code)));
  });
  // Observed below unless the consumer stops early; then its outcome no longer matters to anyone.
  exit.catch(() => {});
  try {
    for await (const line of createInterface({ input: proc.stdout!, crlfDelay: Infinity })) yield line;
    const code = await exit;
    if (code !== 0) throw new ProcessExitError(code, stderr());
  } finally {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  }
}
