import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CpuPinning } from '../shared/kernel/process/cpu-affinity.ts';
import { lowerSessionPriority } from '../shared/kernel/process/session-priority.ts';
import { lowerPriority } from '../shared/kernel/process/spawn.ts';
import type { Logger } from '../shared/kernel/observability/logger.ts';

/**
 * The test pool's own process (issue #35). Agent test runs and call replays run developers' scenarios and a private
 * api + realtime pair for minutes; in the one-process mode they shared the event loop that serves everyone's live
 * calls and slowed other developers' turns. Here they run in `scripts/start.ts tests`, forked once (by the primary
 * when PROCESSES > 1), at niceness 10 so the live calls' process wins the CPU. Its logs go to the same stdout and
 * stderr. It is restarted if it dies (backoff doubling from 1 s to 30 s, reset after a minute up), and stopped with
 * SIGTERM (it drains like any role) when the platform stops; it also drains if this process vanishes (IPC closes).
 * Being its own session, it is its own scheduling group under Linux autogroup, niced as well once it is up:
 * niceness alone only ranks a process within its group, so at first it took as much CPU as the platform
 * (session-priority.ts). Given `cpus` (the batch work's, SPEECH_LOCAL_BATCH_CPUS), it runs on them, and so does
 * every process it starts (affinity is inherited): the core left over stays the live calls', the API's and the
 * database's (cpu-affinity.ts).
 */
export const TESTS_PROCESS_NICE = 10;

export interface TestsProcess {
  /** The running child's pid, if one is running. */
  pid(): number | undefined;
  /** Resolves once the first child has started its platform (a benchmark waits for it before it measures). */
  readonly ready: Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs` plus a margin; no restart after. */
  stop(): Promise<void>;
}

export function startTestsProcess(
  env: NodeJS.ProcessEnv,
  log: Logger,
  graceMs: number,
  cpus: CpuPinning | null = null,
): TestsProcess {
  const script = fileURLToPath(new URL('./start.ts', import.meta.url));
  let child: ChildProcess | null = null;
  let stopping = false;
  let failures = 0;
  let restartTimer: NodeJS.Timeout | null = null;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const start = () => {
    restartTimer = null;
    const startedAt = Date.now();
    // Its own process group: a terminal's Ctrl-C reaches only this process, which then drains the child once (a
    // second signal would make it exit at once, in-flight runs unfinished).
    // Pinned from its first instruction, every thread included: taskset sets its affinity and execs Node (same pid,
    // the IPC channel's descriptor inherited), rather than a `taskset -p` after the fork that races Node's threads.
    const pinned = cpus
      ? { execPath: 'taskset', execArgv: ['-c', cpus.list, process.execPath, ...process.execArgv] }
      : {};
    const proc = fork(script, ['tests'], {
      env,
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      ...pinned,
    });
    child = proc;
    if (proc.pid !== undefined) lowerPriority(proc.pid, TESTS_PROCESS_NICE);
    log.info({ testsPid: proc.pid, nice: TESTS_PROCESS_NICE, cpus: cpus?.list ?? null }, 'test pool process started');
    proc.on('message', (m: { type?: string } | null) => {
      if (m?.type !== 'tests-ready') return;
      // Its own session (detached) is its own scheduling group where the kernel has autogroup: once it is up, the
      // group is niced too. Not before: its boot (a whole platform's, seconds of CPU) would crawl on a busy host.
      if (proc.pid !== undefined) void lowerSessionPriority(proc.pid, TESTS_PROCESS_NICE);
      markReady();
    });
    proc.on('exit', (code, signal) => {
      child = null;
      if (stopping) return;
      failures = Date.now() - startedAt > 60_000 ? 1 : failures + 1;
      const delayMs = Math.min(30_000, 1000 * 2 ** (failures - 1));
      log.error({ testsPid: proc.pid, code, signal, restartInMs: delayMs }, 'test pool process exited; restarting');
      restartTimer = setTimeout(start, delayMs);
    });
  };
  start();

  return {
    ready,
    pid: () => child?.pid,
    async stop() {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      const proc = child;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), graceMs + 5000);
      await exited;
      clearTimeout(killer);
    },
  };
}
