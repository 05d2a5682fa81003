import { getPriority } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ProcessExitError,
  ProcessOutputLimitError,
  ProcessTimeoutError,
  processLines,
  runProcess,
  spawnProcess,
} from '../../shared/kernel/process/spawn.ts';
import { configureTools, toolPath } from '../../shared/kernel/process/tools.ts';
import { loadConfig } from '../../shared/kernel/config/index.ts';
import { waitUntil } from '../../support/helpers/platform.ts';

const sh = { path: 'sh' };

/** Whether a process id is still running (signal 0 only checks). */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('processLines', () => {
  it('yields each line while the process is still running, and kills it when the consumer stops', async () => {
    // The shell prints its pid, then becomes a 30 s sleep: the line can only have come before the exit.
    let pid = 0;
    for await (const line of processLines(sh, ['-c', 'echo $$; exec sleep 30'])) {
      pid = Number(line);
      expect(alive(pid)).toBe(true);
      break;
    }
    await waitUntil(() => !alive(pid));
  });

  it('throws ProcessExitError with the status and stderr after the last line, and the spawn error for a missing binary', async () => {
    const lines: string[] = [];
    const drain = async (cmd: { path: string }, args: string[]) => {
      for await (const line of processLines(cmd, args)) lines.push(line);
    };
    const err = await drain(sh, ['-c', 'echo one; echo two; echo oops >&2; exit 3']).catch((e: unknown) => e);
    expect(lines).toEqual(['one', 'two']);
    expect(err).toBeInstanceOf(ProcessExitError);
    expect(err).toMatchObject({ exitCode: 3, stderr: 'oops\n' });
    await expect(drain({ path: 'no-such-binary-here' }, [])).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('stops the process and rejects with the reason when the signal aborts', async () => {
    const ac = new AbortController();
    let pid = 0;
    const run = (async () => {
      for await (const line of processLines(sh, ['-c', 'echo $$; exec sleep 30'], { signal: ac.signal })) {
        pid = Number(line);
        ac.abort(new Error('caller gave up'));
      }
    })();
    await expect(run).rejects.toThrow('caller gave up');
    await waitUntil(() => !alive(pid));
  });
});

describe('runProcess', () => {
  it('feeds stdin, collects stdout, and resolves a non-zero status with the stderr tail', async () => {
    const r = await runProcess(sh, ['-c', 'tr a-z A-Z; echo bad >&2; exit 2'], { input: 'hello' });
    expect(r).toEqual({ stdout: Buffer.from('HELLO'), stderr: 'bad\n', code: 2 });
    const long = await runProcess(sh, ['-c', 'seq 1 5000 >&2'], { stderrLimit: 10 });
    expect(long.stderr).toBe('4999\n5000\n');
  });

  it('kills a process that runs past its time limit', async () => {
    const err = await runProcess(sh, ['-c', 'exec sleep 30'], { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProcessTimeoutError);
    expect((err as Error).message).toMatch(/sh ran longer than 50 ms/);
  });

  it('kills a process that writes more than maxStdout', async () => {
    await expect(runProcess(sh, ['-c', 'exec yes'], { maxStdout: 100_000 })).rejects.toBeInstanceOf(
      ProcessOutputLimitError,
    );
  });

  it('runs at the requested niceness', async () => {
    const p = spawnProcess(sh, ['-c', 'exec sleep 30'], { nice: 7 });
    try {
      expect(getPriority(p.proc.pid!)).toBe(Math.max(7, getPriority()));
    } finally {
      p.kill();
    }
    await expect(p.exited).resolves.toBeNull();
  });

  it('streams stderr lines to a callback as the tool prints them', async () => {
    const seen: string[] = [];
    await runProcess(sh, ['-c', 'echo a >&2; echo b >&2'], { onStderrLine: (l) => seen.push(l) });
    expect(seen).toEqual(['a', 'b']);
  });
});

describe('tool paths', () => {
  afterEach(() => configureTools(loadConfig({})));

  it('come from the config schema, applied at boot, and are read when a tool starts', async () => {
    expect(toolPath('ffmpeg')).toBe('ffmpeg');
    configureTools(loadConfig({ FFMPEG_PATH: '/bin/echo', TESSERACT_PATH: '/opt/ocr/tesseract' }));
    expect(toolPath('tesseract')).toBe('/opt/ocr/tesseract');
    const r = await runProcess('ffmpeg', ['-version']);
    expect(r.stdout.toString()).toBe('-version\n');
  });
});
