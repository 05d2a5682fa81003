import { once } from 'node:events';
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
import { SpawnerExitedError, spawnChild, spawnerPid } from '../../shared/kernel/process/spawner.ts';
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
    await once(p.proc, 'spawn'); // the pid comes from the spawner process, with the niceness already applied
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

describe('the process spawner (forks off the platform thread)', () => {
  it('forks tools from the spawner process, not from this one', async () => {
    const r = await runProcess(sh, ['-c', 'echo $PPID']);
    const parent = Number(r.stdout.toString());
    expect(parent).toBe(spawnerPid());
    expect(parent).not.toBe(process.pid);
  });

  it('hands over output the tool writes the moment it starts, all of it, and stdin to its end', async () => {
    // Output written before the pipes reach this process stays in the pipe: not a byte is read in between.
    const early = await runProcess(sh, ['-c', 'i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done']);
    const lines = early.stdout.toString().trim().split('\n');
    expect(lines).toHaveLength(2000);
    expect(lines.at(-1)).toBe('line1999');
    const input = Buffer.alloc(3 << 20, 'abcdefgh');
    const echoed = await runProcess({ path: 'cat' }, [], { input });
    expect(echoed.code).toBe(0);
    expect(echoed.stdout.equals(input)).toBe(true);
  });

  it("gives a tool this process's environment as it is at the spawn, not as it was when the spawner started", async () => {
    process.env.SPAWNER_TEST_VALUE = 'set after boot';
    try {
      const r = await runProcess(sh, ['-c', 'printf %s "$SPAWNER_TEST_VALUE"']);
      expect(r.stdout.toString()).toBe('set after boot');
    } finally {
      delete process.env.SPAWNER_TEST_VALUE;
    }
  });

  it('reports a missing binary as Node does (ENOENT), with no pid', async () => {
    const child = spawnChild('/no/such/tool', [], { stdio: ['ignore', 'pipe', 'pipe'] });
    const closed = new Promise((resolve) => child.once('close', resolve));
    const [err] = (await once(child, 'error')) as [NodeJS.ErrnoException];
    expect(err.code).toBe('ENOENT');
    expect(child.pid).toBeUndefined();
    await closed;
  });

  it('kills a tool with SIGKILL when its signal aborts, and the tool is gone', async () => {
    const ac = new AbortController();
    const p = spawnProcess(sh, ['-c', 'exec sleep 30'], { signal: ac.signal });
    await once(p.proc, 'spawn');
    const pid = p.proc.pid!;
    expect(alive(pid)).toBe(true);
    ac.abort(new Error('caller left'));
    await expect(p.exited).rejects.toThrow('caller left');
    expect(p.proc.signalCode).toBe('SIGKILL');
    expect(alive(pid)).toBe(false);
  });

  it('survives the spawner crashing: running tools fail and are killed, the next spawn gets a new spawner', async () => {
    const p = spawnProcess(sh, ['-c', 'exec sleep 30']);
    await once(p.proc, 'spawn');
    const pid = p.proc.pid!;
    const first = spawnerPid()!;
    process.kill(first, 'SIGKILL');
    await expect(p.exited).rejects.toBeInstanceOf(SpawnerExitedError);
    await waitUntil(() => !alive(pid));
    const r = await runProcess(sh, ['-c', 'echo ok; echo $PPID']);
    const [ok, parent] = r.stdout.toString().trim().split('\n');
    expect(ok).toBe('ok');
    expect(Number(parent)).toBe(spawnerPid());
    expect(Number(parent)).not.toBe(first);
  });

  it('keeps this event loop turning while a tool is forked', async () => {
    // A fork on this thread happens inside the spawn call and Node emits 'spawn' on the next tick: no setImmediate
    // turn can come in between. Through the spawner the loop turns while the other process forks. Counted over
    // ten spawns (one could, on a badly stalled machine, find its answer already waiting at the first turn).
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      ticks++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const during: number[] = [];
    try {
      for (let i = 0; i < 10; i++) {
        const before = ticks;
        const p = spawnProcess(sh, ['-c', 'exit 0']);
        await once(p.proc, 'spawn');
        during.push(ticks - before);
        expect(await p.exited).toBe(0);
      }
    } finally {
      ticking = false;
    }
    expect(during.filter((n) => n > 0).length).toBeGreaterThan(0);
  });
});
