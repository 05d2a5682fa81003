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
  redisPrefix: string;
  s3Port: string;
  s3Dir: string;
}

/** A platform process's event-loop delay (ms; 10 ms resolution) over some span. */
export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
  /** Its own timing of `GET /v1/agents` over the span, where the server traces it. */
  agents?: RequestStages;
}

/**
 * A route's requests as the platform process timed them (benchmarks/voice-latency/trace-requests.ts): how many, and
 * [p50, p99] ms of each stage.
 */
export interface RequestStages {
  n: number;
  /** How many found queries of their process waiting for a database connection as their handler started. */
  poolQueued: number;
  /** From the HTTP server's start of the request to the handler's start: routing, auth, rate limit. */
  hooks: [number, number];
  /** The handler's promise: its database query. */
  handler: [number, number];
  /** Sending the answer: serialization and the onSend hooks. */
  send: [number, number];
  /** From there to the response's finish (written to the socket). */
  finish: [number, number];
  /** The whole request, from the HTTP server's start of it to its finish. */
  total: [number, number];
}

export interface BenchPlatform<F> extends BenchPlatformReady {
  child: ChildProcess;
  /** Each platform process's event-loop delay since the last call (or since it started). */
  loopDelay(): Promise<LoopDelay[]>;
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
  const loopWaiters: Array<(l: LoopDelay[]) => void> = [];
  const final = new Promise<F>((r) => (gotFinal = r));
  const rl = createInterface({ input: child.stdout! });
  // Its stdout ends after its last line: no final line by then means there was none.
  const outputEnded = once(rl, 'close').then(() => null);
  const ready = await new Promise<BenchPlatformReady>((resolve, reject) => {
    void exited.then(() => reject(new Error(`the platform process exited (${child.exitCode}) before it was ready`)));
    rl.on('line', (line) => {
      const m = line.startsWith('{')
        ? (JSON.parse(line) as Partial<BenchPlatformReady> & { final?: F; loop?: LoopDelay[] })
        : {};
      if (m.url && m.apiKey) resolve(m as BenchPlatformReady);
      else if (m.final) gotFinal(m.final);
      else if (m.loop) loopWaiters.shift()?.(m.loop);
      else process.stderr.write(line + '\n');
    });
  });
  return {
    ...ready,
    child,
    loopDelay() {
      return new Promise<LoopDelay[]>((resolve) => {
        loopWaiters.push(resolve);
        child.kill('SIGUSR2');
      });
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const fin = await Promise.race([final, outputEnded]);
      await exited;
      return fin;
    },
  };
}

/** Ends the run (exit code 2) when it takes longer than `seconds`: a stuck benchmark is stopped and says so. */
export function benchWatchdog(srv: { child: ChildProcess }, name: string, seconds: number): void {
  const timer = setTimeout(() => {
    console.error(`${name}: watchdog: the run took too long; stopping`);
    srv.child.kill('SIGKILL');
    process.exit(2);
  }, seconds * 1000);
  timer.unref();
}

/** Places synthetic call `i` on the bench platform's agent: its session id and the TwiML's stream token. */
export async function placeTwilioCall(
  srv: Pick<BenchPlatformReady, 'url' | 'apiKey' | 'agentId'>,
  i: number,
): Promise<{ sessionId: string; twiml: string; admitted?: boolean }> {
  const res = await fetch(`${srv.url}/v1/sessions/twilio`, {
    method: 'POST',
    headers: { authorization: `Bearer ${srv.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agentId: srv.agentId, from: `+1555000${String(i).padStart(4, '0')}`, to: '+15559990000' }),
  });
  return (await res.json()) as { sessionId: string; twiml: string; admitted?: boolean };
}

/** The platform env of a voice benchmark: its STT and LLM on the local doubles, every call one developer's. */
export function voiceBenchEnv(
  dg: { url: string; key: string },
  llm: { baseUrl: string; key: string },
  processes: string,
): Record<string, string> {
  return {
    PUBLIC_BASE_URL: 'https://voice.example.com',
    REALTIME_SESSION_SECRET: 'benchmark-secret-benchmark-secret-0123456789',
    // Every benchmark call is one developer's: the per-developer cap on running sessions must not be what limits.
    REALTIME_SESSIONS_PER_DEVELOPER: 'starter:5,pro:25,scale:100000',
    DEEPGRAM_BASE_URL: dg.url,
    DEEPGRAM_API_KEY: dg.key,
    OPENAI_BASE_URL: llm.baseUrl,
    OPENAI_API_KEY: llm.key,
    OUTBOUND_ALLOWLIST: '127.0.0.1',
    BENCH_PROCESSES: processes,
    // Calls here are heard by the vendor STT double, which never reads an agent's language model: building one at
    // the agent's save (seconds of a core) would only compete with the first calls.
    SPEECH_LM_AUTO_BUILD: 'false',
  };
}
