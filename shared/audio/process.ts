import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';

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
    const proc = spawn(cmd, args, {
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      signal: opts.signal,
      killSignal: 'SIGKILL',
    });
    if (opts.nice && proc.pid !== undefined) lowerPriority(proc.pid, opts.nice);
    const out: Buffer[] = [];
    let stderr = '';
    proc.stdout!.on('data', (d: Buffer) => out.push(d));
    proc.stderr!.on('data', (d: Buffer) => {
      if (stderr.length < 8192) stderr += d.toString();
    });
    proc.on('error', (e) => reject(opts.signal?.aborted ? opts.signal.reason : e));
    proc.on('close', (code) => {
      if (opts.signal?.aborted) return reject(opts.signal.reason);
      resolve({ stdout: Buffer.concat(out), stderr, code });
    });
    if (opts.input !== undefined) {
      proc.stdin!.on('error', () => {});
      proc.stdin!.end(opts.input);
    }
  });
}

/** Best effort: a process that has already exited, or a platform without priorities, keeps its priority. */
export function lowerPriority(pid: number, nice: number): void {
  try {
    setPriority(pid, Math.min(19, Math.max(0, nice)));
  } catch {
    // ESRCH (already exited) or EACCES: the work still runs, only unprioritised.
  }
}
