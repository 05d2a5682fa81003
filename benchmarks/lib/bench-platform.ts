import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/** What benchmarks/voice-latency/server.ts prints once it is ready. */
export interface BenchPlatformReady {
  url: string;
  apiKey: string;
  agentId: string;
  developerId: string;
  databaseUrl: string;
}

export interface BenchPlatform<F> extends BenchPlatformReady {
  child: ChildProcess;
  /** SIGTERM, then its `{final: …}` line (null when it exited without one), once it has exited. */
  stop(): Promise<F | null>;
}

/**
 * The platform under a benchmark in processes of its own (benchmarks/voice-latency/server.ts: api + realtime + cpu
 * on a throwaway database, BENCH_PROCESSES copies sharing one port), so the load the benchmark makes does not share
 * its event loops. The server's logs share its stdout: its JSON lines are read here, the rest goes to stderr.
 */
export async function startBenchPlatform<F>(
  env: Record<string, string>,
  execArgv: string[] = [],
): Promise<BenchPlatform<F>> {
  const child = spawn(process.execPath, [...execArgv, '--import', 'tsx', 'benchmarks/voice-latency/server.ts'], {
    env: { ...process.env, LOG_LEVEL: 'silent', TEST_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit').then(() => null);
  let gotFinal: (f: F) => void = () => {};
  const final = new Promise<F>((r) => (gotFinal = r));
  const rl = createInterface({ input: child.stdout! });
  // Its stdout ends after its last line: no final line by then means there was none.
  const outputEnded = once(rl, 'close').then(() => null);
  const ready = await new Promise<BenchPlatformReady>((resolve, reject) => {
    void exited.then(() => reject(new Error(`the platform process exited (${child.exitCode}) before it was ready`)));
    rl.on('line', (line) => {
      const m = line.startsWith('{') ? (JSON.parse(line) as Partial<BenchPlatformReady> & { final?: F }) : {};
      if (m.url && m.apiKey) resolve(m as BenchPlatformReady);
      else if (m.final) gotFinal(m.final);
      else process.stderr.write(line + '\n');
    });
  });
  return {
    ...ready,
    child,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const fin = await Promise.race([final, outputEnded]);
      await exited;
      return fin;
    },
  };
}
