import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times. */
const TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

export interface CpuTimes {
  /** Seconds of user and system (kernel) CPU. */
  user: number;
  system: number;
  processes: number;
}

/**
 * CPU used by a process and every process under it (the platform processes, and the flite workers or per-sentence
 * flite processes they start), from /proc/<pid>/stat: own utime/stime plus cutime/cstime of children already
 * reaped, so work of processes that came and went between two samples is counted too.
 */
export function treeCpu(root: number): CpuTimes {
  const stats = new Map<number, { ppid: number; user: number; system: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let raw: string;
    try {
      raw = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its closing ")".
    const f = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    stats.set(Number(name), {
      ppid: Number(f[1]),
      user: Number(f[11]) + Number(f[13]),
      system: Number(f[12]) + Number(f[14]),
    });
  }
  const out: CpuTimes = { user: 0, system: 0, processes: 0 };
  for (const [pid, s] of stats) {
    let p: number | undefined = pid;
    for (let depth = 0; p !== undefined && p > 1 && depth < 64 && p !== root; depth++) p = stats.get(p)?.ppid;
    if (p !== root) continue;
    out.user += s.user / TICKS;
    out.system += s.system / TICKS;
    out.processes++;
  }
  return out;
}
