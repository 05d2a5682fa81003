import { readFileSync, writeFileSync } from 'node:fs';
import { lowerPriority } from './spawn.ts';

/**
 * Lowers the priority of a process that leads a session of its own (started `detached`), so that it yields the CPU
 * to the platform's live work also where the kernel groups processes by session (issue #35).
 *
 * Linux with autogroup (`/proc/sys/kernel/sched_autogroup_enabled`, on in most distributions' kernels) schedules
 * each session as one group, and the groups share the CPU equally whatever the niceness of the processes in them:
 * a process of its own session at niceness 10 got as much CPU as the whole platform (its niceness only counts
 * against its own session's other processes). The group's own niceness (`/proc/<pid>/autogroup`) is what weighs
 * it against the others, so it is set to the same value. A process of the caller's own session is only reniced:
 * writing its group's niceness would lower the caller's whole session.
 *
 * Best effort, like lowerPriority: where there is no autogroup (other kernels, containers with a cgroup CPU
 * controller, which schedule by cgroup instead) only the niceness applies. The kernel allows an unprivileged
 * process one group change per 100 ms (EAGAIN otherwise), so a refused write is retried a few times. Resolves to
 * whether a group niceness is in effect.
 */
export async function lowerSessionPriority(pid: number, nice: number): Promise<boolean> {
  lowerPriority(pid, nice);
  if (!leadsSession(pid)) return false;
  const value = String(Math.min(19, Math.max(0, nice)));
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      writeFileSync(`/proc/${pid}/autogroup`, value);
      // The write succeeds also where the process is scheduled by a cgroup rather than its autogroup (the group's
      // niceness is then stored but weighs nothing, and the file reads empty): report only a niceness in effect.
      return sessionGroupNice(pid) !== null;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') return false; // ENOENT: no autogroup, or it exited
      await new Promise((r) => setTimeout(r, 120));
    }
  }
  return false;
}

/** The niceness of the process's session group, or null where there is none (no autogroup, or it exited). */
export function sessionGroupNice(pid: number): number | null {
  try {
    const m = / nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Whether the process is its session's leader (field 6 of /proc/<pid>/stat is its session id). */
function leadsSession(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]) === pid;
  } catch {
    return false;
  }
}
