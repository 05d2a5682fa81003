import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

/**
 * What the victim competes with, per phase of test:abuse: CPU seconds of each kind of process under the runner
 * (the platform's process, its flite workers by niceness, the test pool's process and its workers, pocketsphinx…),
 * read from /proc every 250 ms, and the machine's CPU that was none of ours (other sessions, Postgres, Redis).
 */

const TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  nice: number;
  /** Own user + system seconds. */
  own: number;
  /** Reaped children's user + system seconds. */
  reaped: number;
  cmd: string;
}

function readProcs(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const raw = readFileSync(`/proc/${name}/stat`, 'utf8');
      const comm = raw.slice(raw.indexOf('(') + 1, raw.lastIndexOf(')'));
      const f = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
      let cmd = '';
      if (comm === 'node' || comm.startsWith('MainThread')) {
        cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      }
      out.set(Number(name), {
        pid: Number(name),
        ppid: Number(f[1]),
        comm,
        nice: Number(f[16]),
        own: (Number(f[11]) + Number(f[12])) / TICKS,
        reaped: (Number(f[13]) + Number(f[14])) / TICKS,
        cmd,
      });
    } catch {
      // exited while we looked
    }
  }
  return out;
}

/** Busy and total CPU seconds of the whole machine (/proc/stat). */
function machineCpu(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const total = line.reduce((a, b) => a + b, 0);
  const idle = (line[3] ?? 0) + (line[4] ?? 0);
  return { busy: (total - idle) / TICKS, total: total / TICKS };
}

/** The kind a process is counted under, by what it runs and where it hangs in the runner's tree. */
function kindOf(p: Proc, procs: Map<number, Proc>, root: number): string | null {
  const chain: Proc[] = [];
  for (let q: Proc | undefined = p, d = 0; q && d < 64; q = procs.get(q.ppid), d++) {
    chain.push(q);
    if (q.pid === root) break;
  }
  if (chain.at(-1)?.pid !== root) {
    if (p.comm === 'postgres') return 'postgres (whole machine, shared)';
    if (p.comm.startsWith('redis-server')) return 'redis (whole machine, shared)';
    return null;
  }
  if (p.pid === root) return "runner (victim's caller, STT/LLM doubles, abuser's client)";
  const inTests = chain.some((q) => q.cmd.includes('start.ts tests'));
  const where = inTests ? 'test pool' : 'platform';
  if (p.comm === 'node' || p.comm.startsWith('MainThread')) {
    if (p.cmd.includes('start.ts tests')) return 'test pool process (node)';
    if (inTests) return 'test pool: node children';
    return procs.get(p.ppid)?.pid === root ? 'bench primary (node)' : 'platform process (node)';
  }
  const comm = p.comm.startsWith('pocketsphinx') ? 'pocketsphinx' : p.comm;
  return `${where}: ${comm}${comm === 'flite-server' ? ` nice ${p.nice}` : ''}`;
}

export interface PhaseCpu {
  seconds: number;
  /** CPU seconds by kind of process. */
  byKind: Map<string, number>;
  /** Busy CPU seconds of the whole machine, and of it none of the runner's tree. */
  machineBusy: number;
  others: number;
}

/**
 * Samples every 250 ms from `start()`; `phase(name)` closes the current phase's counts and starts the next. CPU of a
 * process that exits between two samples is counted under its parent's kind plus ": short-lived children".
 */
export class CpuProfile {
  private last = new Map<number, Seen>();
  private primed = false;
  private timer: NodeJS.Timeout | null = null;
  private current: { name: string; t0: number; byKind: Map<string, number>; busy0: number } | null = null;
  readonly phases = new Map<string, PhaseCpu>();

  constructor(private readonly root: number) {}

  start(name: string): void {
    this.sample();
    this.current = { name, t0: performance.now(), byKind: new Map(), busy0: machineCpu().busy };
    this.timer = setInterval(() => this.sample(), 250);
    this.timer.unref();
  }

  /** Ends the current phase (and starts `next` unless null). */
  phase(next: string | null): void {
    this.sample();
    const c = this.current!;
    const busy = machineCpu().busy;
    const ours = [...c.byKind].filter(([k]) => !k.includes('whole machine')).reduce((a, [, v]) => a + v, 0);
    const shared = [...c.byKind].filter(([k]) => k.includes('whole machine')).reduce((a, [, v]) => a + v, 0);
    this.phases.set(c.name, {
      seconds: (performance.now() - c.t0) / 1000,
      byKind: c.byKind,
      machineBusy: busy - c.busy0,
      others: Math.max(0, busy - c.busy0 - ours - shared),
    });
    if (next === null) {
      if (this.timer) clearInterval(this.timer);
      this.current = null;
    } else this.current = { name: next, t0: performance.now(), byKind: new Map(), busy0: busy };
  }

  private sample(): void {
    const procs = readProcs();
    const seen = new Map<number, Seen>();
    const add = (kind: string, v: number) => {
      if (this.current && v > 0) this.current.byKind.set(kind, (this.current.byKind.get(kind) ?? 0) + v);
    };
    // Children that exited since the last sample: their CPU up to then was counted under their own kind, and their
    // parent's reaped figure now holds all of it; only what is beyond that is new.
    const counted = new Map<number, number>();
    for (const [pid, c] of this.last)
      if (!procs.has(pid)) counted.set(c.ppid, (counted.get(c.ppid) ?? 0) + c.own + c.reaped);
    for (const p of procs.values()) {
      const prev = this.last.get(p.pid);
      // A process that exec'd since (a pinned flite worker starts as taskset) is the kind of what it runs now.
      const kind = prev && prev.comm === p.comm ? prev.kind : kindOf(p, procs, this.root);
      seen.set(p.pid, { kind, comm: p.comm, ppid: p.ppid, own: p.own, reaped: p.reaped });
      if (!kind) continue;
      // A process first seen now (after the first sample) started since: all its CPU is new.
      if (!prev) {
        if (this.primed) add(kind, p.own);
        continue;
      }
      add(kind, p.own - prev.own);
      add(`${kind}: short-lived children`, p.reaped - prev.reaped - (counted.get(p.pid) ?? 0));
    }
    this.last = seen;
    this.primed = true;
  }
}

interface Seen {
  kind: string | null;
  comm: string;
  ppid: number;
  own: number;
  reaped: number;
}
