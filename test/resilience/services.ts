import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { waitUntil } from '../../support/helpers/platform.ts';

/** A free TCP port on loopback (bound once to port 0, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * A redis-server of this test's own, so it can be killed and restarted empty (as after a failover to a fresh
 * replica): no persistence, a new data directory on every start, the same port.
 */
export class OwnRedis {
  private proc: ChildProcess | null = null;
  private dir = '';
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.dir = mkdtempSync(join(tmpdir(), 'vap-redis-'));
    const proc = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.proc = proc;
    await waitUntil(async () => {
      if (proc.exitCode !== null) throw new Error('redis-server exited at start');
      return ping(this.port);
    }, 20_000);
  }

  /** SIGKILL: what Redis loses is gone, as in a crash without persistence. */
  async kill(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** True when something answers a Redis PING on the port. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    import('node:net').then(({ connect }) => {
      const sock = connect(port, '127.0.0.1');
      sock.once('error', () => resolve(false));
      sock.once('connect', () => sock.write('PING\r\n'));
      sock.once('data', (d) => {
        sock.destroy();
        resolve(d.toString().startsWith('+PONG'));
      });
    });
  });
}

function pgBin(): string {
  const majors = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  return `/usr/lib/postgresql/${majors[0]}/bin`;
}

/** Runs a server binary as the postgres user when we are root (initdb and postgres refuse to run as root). */
function asPostgres(cmd: string, args: string[]): string {
  const full = join(pgBin(), cmd);
  return process.getuid?.() === 0
    ? execFileSync('runuser', ['-u', 'postgres', '--', full, ...args], { encoding: 'utf8', stdio: 'pipe' })
    : execFileSync(full, args, { encoding: 'utf8', stdio: 'pipe' });
}

/**
 * A Postgres server of this test's own (initdb in a temp directory, a free port), so it can be stopped and
 * started under load. pgvector comes from the installed server's extension directory.
 */
export class OwnPostgres {
  private readonly dir: string;
  constructor(readonly port: number) {
    this.dir = mkdtempSync(join(tmpdir(), 'vap-pg-'));
    chmodSync(this.dir, 0o777);
  }

  get url(): string {
    return `postgres://vap:vap@127.0.0.1:${this.port}/vap`;
  }

  async init(): Promise<void> {
    const data = join(this.dir, 'data');
    asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await this.start();
    const admin = new pg.Client({ host: '127.0.0.1', port: this.port, user: 'postgres', database: 'postgres' });
    await admin.connect();
    await admin.query(`create role vap login superuser password 'vap'`);
    await admin.query('create database vap owner vap');
    await admin.end();
  }

  async start(): Promise<void> {
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
    asPostgres('pg_ctl', ['-D', join(this.dir, 'data'), '-o', opts, '-l', join(this.dir, 'log'), '-w', 'start']);
    await waitUntil(() => this.ready(), 30_000);
  }

  /** Fast shutdown: sessions are cut off, as in a restart or a failover. */
  async stop(): Promise<void> {
    asPostgres('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
  }

  async destroy(): Promise<void> {
    try {
      asPostgres('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']);
    } catch {
      // Already stopped.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async ready(): Promise<boolean> {
    const c = new pg.Client({ host: '127.0.0.1', port: this.port, user: 'postgres', database: 'postgres' });
    try {
      await c.connect();
      await c.query('select 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => undefined);
    }
  }
}
