import { spawn } from 'node:child_process';
import { VideoFailure } from './failure.ts';

/**
 * Runs ffmpeg/ffprobe (Debian packages) to completion. Exit ≠ 0 becomes `input_unreadable` when the input is at
 * fault (the caller says so), else a retryable internal failure. Abortable.
 */
export function runTool(
  tool: 'ffmpeg' | 'ffprobe' | string,
  args: string[],
  opts: { signal?: AbortSignal; input?: Buffer | string; inputFault?: boolean; maxStdout?: number } = {},
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, { stdio: ['pipe', 'pipe', 'pipe'], signal: opts.signal });
    const out: Buffer[] = [];
    let outLen = 0;
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      outLen += c.length;
      if (opts.maxStdout && outLen > opts.maxStdout) child.kill('SIGKILL');
      else out.push(c);
    });
    child.stderr.on('data', (c: Buffer) => {
      if (err.length < 8000) err += c.toString();
    });
    child.on('error', (e) =>
      reject(e.name === 'AbortError' ? e : new VideoFailure('engine_unavailable', `${tool}: ${e.message}`, true)),
    );
    child.on('close', (code) => {
      if (code === 0) return resolve(Buffer.concat(out));
      if (opts.signal?.aborted) return reject(opts.signal.reason ?? new Error('aborted'));
      const tail = err.trim().split('\n').slice(-3).join(' ').slice(0, 400);
      reject(
        opts.inputFault
          ? new VideoFailure('input_unreadable', `The media could not be decoded (${tail || `exit ${code}`}).`)
          : new VideoFailure('internal_error', `${tool} failed: ${tail || `exit ${code}`}`, true),
      );
    });
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input);
  });
}

export const ffmpeg = (args: string[], opts: Parameters<typeof runTool>[2] = {}) =>
  runTool('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args], opts);
