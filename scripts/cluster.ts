import cluster from 'node:cluster';

/**
 * Runs `n` copies of this process with node:cluster: they share the listening port (the primary hands out
 * connections) and share nothing else but Postgres, Redis and S3, like pods. The primary forwards SIGTERM/SIGINT
 * so each copy drains, and exits once all have exited (non-zero if any did). A copy that dies unexpectedly is
 * replaced. `beforeExit` runs once every copy has exited (the test pool's process is stopped there).
 */
export function runAsPrimary(n: number, beforeExit: () => Promise<unknown> = async () => {}): void {
  let stopping = false;
  const exitCodes: number[] = [];
  const fork = () => cluster.fork();
  for (let i = 0; i < n; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (!stopping) {
      console.error(`process ${worker.process.pid} exited (${signal ?? code}); starting a replacement`);
      fork();
      return;
    }
    // A copy still starting when the signal came has no handler yet and dies by the signal: a clean stop too.
    exitCodes.push(signal === 'SIGTERM' || signal === 'SIGINT' ? 0 : (code ?? 1));
    if (Object.keys(cluster.workers ?? {}).length === 0) {
      const code = exitCodes.some((c) => c !== 0) ? 1 : 0;
      void beforeExit().finally(() => process.exit(code));
    }
  });
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.on(sig, () => {
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill(sig);
    });
  }
}

/** True in the process that should print one-per-machine messages (the only process, or the first copy). */
export function isFirstCopy(): boolean {
  return cluster.isPrimary || cluster.worker?.id === 1;
}
