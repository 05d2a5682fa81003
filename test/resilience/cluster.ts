import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import { insertDeveloper } from '../../shared/kernel/db/developers.ts';
import { migrate } from '../../shared/kernel/db/migrate.ts';
import { createDb, type Db } from '../../shared/kernel/db/pool.ts';
import { startEmbeddedS3, type EmbeddedS3 } from '../../shared/kernel/storage/embedded-s3.ts';
import { waitUntil } from '../../support/helpers/platform.ts';
import { freePort, OwnPostgres, OwnRedis } from './services.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

/** One platform process (`scripts/start.ts <roles>`), as a cluster runs each role in its own pod. */
export interface RoleProcess {
  roles: string;
  url: string;
  child: ChildProcess;
  output(): string;
}

/** A webhook receiver that records each delivery's webhook-id and the job it is about. */
export interface WebhookLog {
  url: string;
  /** Deliveries answered 2xx, per job id. */
  delivered: Map<string, string[]>;
  close(): Promise<void>;
}

/**
 * A whole platform of this test's own: its own Postgres and Redis (so they can be killed), an S3 server, and
 * the roles as separate processes, sharing REALTIME_SESSION_SECRET as a cluster's pods do.
 */
export class Cluster {
  readonly pg: OwnPostgres;
  readonly redis: OwnRedis;
  db!: Db;
  s3!: EmbeddedS3;
  hooks!: WebhookLog;
  readonly procs: RoleProcess[] = [];
  private s3dir = '';
  readonly wav: Buffer;

  private constructor(pgPort: number, redisPort: number) {
    this.pg = new OwnPostgres(pgPort);
    this.redis = new OwnRedis(redisPort);
    const wavPath = join(mkdtempSync(join(tmpdir(), 'vap-res-')), 'speech.wav');
    execFileSync('flite', ['-t', 'Hello there. The platform keeps every job it accepted.', '-o', wavPath]);
    this.wav = readFileSync(wavPath);
  }

  static async start(): Promise<Cluster> {
    const c = new Cluster(await freePort(), await freePort());
    await Promise.all([c.pg.init(), c.redis.start()]);
    // A small pool: a restart of Postgres cuts every connection, and the test's own reads must come back too.
    c.db = createDb(c.pg.url, 4);
    await migrate(c.db);
    c.s3dir = mkdtempSync(join(tmpdir(), 'vap-res-s3-'));
    c.s3 = await startEmbeddedS3(c.s3dir, 0);
    c.hooks = await webhookLog();
    return c;
  }

  env(): Record<string, string> {
    return {
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
      HOST: '127.0.0.1',
      DATABASE_URL: this.pg.url,
      DATABASE_POOL_MAX: '5',
      REDIS_URL: this.redis.url,
      REDIS_PREFIX: 'res',
      S3_ENDPOINT: this.s3.endpoint,
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      REALTIME_SESSION_SECRET: 'resilience-suite-shared-session-secret-0123456789',
      RECONCILE_INTERVAL_MS: '500',
      RECONCILE_AFTER_MS: '2000',
      WORKER_STALLED_INTERVAL_MS: '3000',
      WEBHOOK_RETRY_SCALE: '0.0002',
      VIDEO_AVATAR_SIZE: '256',
      SHUTDOWN_GRACE_MS: '1000',
      PROCESSES: '1',
      TIER_PRO_MONTHLY_CREDITS: '100000000',
    };
  }

  /** Starts `scripts/start.ts <roles>` and waits for its health endpoint. */
  async spawn(roles: string): Promise<RoleProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, ['--no-deprecation', '--import', 'tsx', 'scripts/start.ts', roles], {
      cwd: ROOT,
      env: { ...process.env, ...this.env(), PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
    child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
    const proc: RoleProcess = { roles, url: `http://127.0.0.1:${port}`, child, output: () => out };
    this.procs.push(proc);
    await waitUntil(async () => {
      if (child.exitCode !== null) throw new Error(`${roles} exited at start:\n${out}`);
      return fetch(`${proc.url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
    }, 180_000);
    return proc;
  }

  /** SIGKILL, as a node or a pod dies: no drain, locks left behind. */
  async kill(proc: RoleProcess): Promise<void> {
    if (proc.child.exitCode !== null) return;
    const exited = new Promise((r) => proc.child.once('exit', r));
    proc.child.kill('SIGKILL');
    await exited;
  }

  async developer(): Promise<string> {
    const dev = await insertDeveloper(this.db, `res-${Date.now()}`, 'pro');
    return (await mintKey(this.db, dev.id, 'Default')).key;
  }

  async close(): Promise<void> {
    for (const p of this.procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await this.hooks?.close();
    await this.db?.end();
    await this.s3?.close();
    await this.redis.kill();
    await this.pg.destroy();
    rmSync(this.s3dir, { recursive: true, force: true });
  }
}

async function webhookLog(): Promise<WebhookLog> {
  const delivered = new Map<string, string[]>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const jobId = (JSON.parse(body) as { data?: { id?: string } }).data?.id ?? '?';
      delivered.set(jobId, [...(delivered.get(jobId) ?? []), String(req.headers['webhook-id'])]);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    delivered,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
