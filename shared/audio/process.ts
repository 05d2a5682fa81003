import { spawn } from 'node:child_process';

export interface RunResult {
  stdout: Buffer;
  stderr: string;
  code: number | null;
}

/**
 * Runs a command to completion with optional stdin, collecting stdout. Aborting the signal kills the process and
 * rejects with the signal's reason. A missing binary rejects with the spawn error (ENOENT).
 */
export function runProcess(
  cmd: string,
  args: string[],
  opts: { input?: Buffer | string; signal?: AbortSignal } = {},
): Promise<RunResult> {
  opts.signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const proc = spawn(cmd, args, {
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      signal: opts.signal,
      killSignal: 'SIGKILL',
    });
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
