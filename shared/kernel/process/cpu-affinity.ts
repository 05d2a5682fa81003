import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU placement of work no live call waits for (issue #35): developers' non-live syntheses (the batch flite pool)
 * and the test pool's process run on every core but one, so the core left over is always there for live calls, the
 * API and the database. Niceness alone did not do it on two cores: the abuser's legal syntheses kept the nice-10
 * batch pool at 1.3 cores, and Postgres, which is in another scheduling group (autogroup) than the platform's niced
 * workers, waited for a core; the victim's `GET /v1/agents` p99 went 7 → 43 ms in its query's round trip.
 *
 * Node has no sched_setaffinity: a pinned process is started through `taskset -c <list>` (util-linux), which sets
 * its own affinity and execs the program, so the program runs pinned from its first instruction, with the same pid.
 * The workers are long-lived, so the extra exec is off the hot path. Best effort: where taskset is missing, the
 * kernel refuses the affinity (a seccomp filter, a cpuset that changed) or one core is allowed, nothing is pinned.
 */

/** A CPU set to start processes on, and how: `taskset -c <list>` before the program. */
export interface CpuPinning {
  /** The cpus as taskset and /proc write them: `1`, `1-3`, `0,2-3`. */
  readonly list: string;
  readonly cpus: readonly number[];
}

/** What was chosen for the batch work, and why (logged once at boot). */
export interface CpuChoice {
  pinning: CpuPinning | null;
  reason: string;
}

/** The largest cpu number accepted in a list (the kernel's NR_CPUS is at most 8192). */
const MAX_CPU = 8191;

/**
 * Parses a cpu list as taskset -c takes it and /proc/<pid>/status writes Cpus_allowed_list: numbers and ranges
 * separated by commas (`0-3,5,8-11`). Returns the cpus sorted, each once; throws on anything else (an empty list
 * included).
 */
export function parseCpuList(text: string): number[] {
  const cpus = new Set<number>();
  for (const part of text.trim().split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) throw new Error(`not a cpu list: "${text.slice(0, 40)}" (write e.g. 1-3 or 0,2)`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from || to > MAX_CPU) throw new Error(`not a cpu range: ${part.trim()}`);
    for (let c = from; c <= to; c++) cpus.add(c);
  }
  return [...cpus].sort((a, b) => a - b);
}

/** The shortest list for `cpus` (sorted, distinct): runs of consecutive cpus as ranges. */
export function formatCpuList(cpus: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < cpus.length;) {
    let j = i;
    while (j + 1 < cpus.length && cpus[j + 1] === cpus[j]! + 1) j++;
    parts.push(i === j ? `${cpus[i]}` : `${cpus[i]}-${cpus[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/**
 * The cpus this process may run on (its Cpus_allowed_list: what a container's cpuset, taskset or the operator left
 * it), which may be fewer than os.cpus() lists; null where /proc cannot be read (not Linux).
 */
export function allowedCpus(status?: string): number[] | null {
  try {
    const text = status ?? readFileSync('/proc/self/status', 'utf8');
    const m = /^Cpus_allowed_list:\s*(\S+)\s*$/m.exec(text);
    return m ? parseCpuList(m[1]!) : null;
  } catch {
    return null;
  }
}

/**
 * The batch work's cpus from the setting (SPEECH_LOCAL_BATCH_CPUS) and the cpus this process may use: empty = every
 * allowed cpu but the lowest numbered, which is left to the live work, where two or more are allowed; `all` =
 * nothing pinned; a list = those of its cpus that are allowed. Pure: `allowed` is read by the caller.
 */
export function chooseBatchCpus(setting: string, allowed: readonly number[] | null): CpuChoice {
  const value = setting.trim();
  if (value === 'all') return { pinning: null, reason: 'SPEECH_LOCAL_BATCH_CPUS=all: not pinned' };
  if (!allowed) return { pinning: null, reason: 'the allowed cpus cannot be read (no /proc): not pinned' };
  let cpus: number[];
  if (value === '') {
    if (allowed.length < 2) return { pinning: null, reason: `one cpu allowed (${formatCpuList(allowed)}): not pinned` };
    cpus = allowed.slice(1);
  } else {
    const asked = new Set(parseCpuList(value));
    cpus = allowed.filter((c) => asked.has(c));
    if (cpus.length === 0) {
      return {
        pinning: null,
        reason: `none of cpus ${value} is allowed to this process (${formatCpuList(allowed)}): not pinned`,
      };
    }
  }
  if (cpus.length === allowed.length) {
    return { pinning: null, reason: `every allowed cpu (${formatCpuList(allowed)}) asked: not pinned` };
  }
  const list = formatCpuList(cpus);
  return { pinning: { list, cpus }, reason: `pinned to cpus ${list} of ${formatCpuList(allowed)}` };
}

const tried = new Map<string, boolean>();

/**
 * Whether `taskset -c <list>` can start a program here: it is run on `true`, synchronously, once per list and process,
 * at boot (a process start of a few ms while the platform is still small). False where taskset is missing or the
 * affinity is refused.
 */
export function canPin(pinning: CpuPinning): boolean {
  let ok = tried.get(pinning.list);
  if (ok === undefined) {
    const r = spawnSync('taskset', ['-c', pinning.list, 'true'], { stdio: 'ignore', timeout: 5000 });
    ok = r.error === undefined && r.status === 0;
    tried.set(pinning.list, ok);
  }
  return ok;
}

/** The batch work's placement for this process: chooseBatchCpus, then taskset tried once. */
export function resolveBatchCpus(setting: string): CpuChoice {
  const choice = chooseBatchCpus(setting, allowedCpus());
  if (choice.pinning && !canPin(choice.pinning)) {
    return { pinning: null, reason: `taskset -c ${choice.pinning.list} failed (missing or refused): not pinned` };
  }
  return choice;
}

/** `path args` started on `pinning`'s cpus: taskset sets its own affinity, then execs the program (same pid). */
export function pinnedCommand(pinning: CpuPinning, path: string, args: string[]): { path: string; args: string[] } {
  return { path: 'taskset', args: ['-c', pinning.list, path, ...args] };
}
