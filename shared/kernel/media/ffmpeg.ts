import { ProcessOutputLimitError, runProcess, type RunOptions } from '../process/spawn.ts';
import type { Tool } from '../process/tools.ts';
import { scrubInternals } from '../errors/scrub.ts';
import { ToolFailure } from './tool-failure.ts';

export interface ToolOptions extends Pick<RunOptions, 'signal' | 'input' | 'maxStdout' | 'timeoutMs'> {
  /** A failure means the input is at fault (`unreadable`), not the machine. */
  inputFault?: boolean;
}

/**
 * Runs ffmpeg, ffprobe or tesseract (Debian packages, paths from config) to completion through the one spawn
 * helper, mapping how it ended onto a ToolFailure: exit ≠ 0 is `unreadable` when the input is at fault (the
 * caller says so), else a retryable `failed`; a tool that cannot start is `unavailable`. An abort rejects with the signal's reason.
 */
export async function runTool(tool: Tool, args: string[], opts: ToolOptions = {}): Promise<Buffer> {
  let r;
  try {
    r = await runProcess(tool, args, opts);
  } catch (e) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (e instanceof ProcessOutputLimitError) throw unreadable(opts, tool, e.message);
    throw new ToolFailure('unavailable', `${tool}: ${scrubInternals((e as Error).message)}`);
  }
  if (r.code === 0) return r.stdout;
  const tail = r.stderr.trim().split('\n').slice(-3).join(' ').slice(0, 400);
  throw unreadable(opts, tool, tail || `exit ${r.code}`);
}

function unreadable(opts: ToolOptions, tool: Tool, stderr: string): ToolFailure {
  // The tool names its files by their paths in the worker's temp folder: the caller sees the reason, not the path.
  const why = scrubInternals(stderr);
  return opts.inputFault
    ? new ToolFailure('unreadable', `The media could not be decoded (${why}).`)
    : new ToolFailure('failed', `${tool} failed: ${why}`);
}

export const ffmpeg = (args: string[], opts: ToolOptions = {}) =>
  runTool('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args], opts);
