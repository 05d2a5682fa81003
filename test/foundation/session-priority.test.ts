import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { lowerSessionPriority, sessionGroupNice } from '../../shared/kernel/process/session-priority.ts';

/** A process's niceness: field 19 of /proc/<pid>/stat. */
async function niceOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

const started: ChildProcess[] = [];
afterEach(() => {
  for (const c of started.splice(0)) c.kill('SIGKILL');
});

/**
 * Issue #35: the test pool's process leads a session of its own (detached); where Linux schedules sessions as
 * groups (autogroup), its niceness 10 only ranked it within that group, and the group took as much CPU as the
 * whole platform. Its group is niced as well now; a process of our own session never is (that would lower us).
 */
describe('lowerSessionPriority', () => {
  it("nices a session leader and its scheduling group; only renices a process of the caller's session", async () => {
    const own = sessionGroupNice(process.pid);
    const leader = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const member = spawn('sleep', ['30'], { stdio: 'ignore' });
    started.push(leader, member);

    // Whether a group niceness applies is the leader's own group's say: our group may read none (a process of
    // the kernel's default group, as CI's is, or of a cgroup) while the leader's new session group does.
    const inEffect = await lowerSessionPriority(leader.pid!, 10);
    expect(await niceOf(leader.pid!)).toBe(10);
    expect(inEffect).toBe(sessionGroupNice(leader.pid!) !== null);
    // Where the leader's group is scheduled by its niceness, that niceness is the one asked for.
    if (inEffect) expect(sessionGroupNice(leader.pid!)).toBe(10);

    expect(await lowerSessionPriority(member.pid!, 7)).toBe(false);
    expect(await niceOf(member.pid!)).toBe(7);
    expect(sessionGroupNice(process.pid)).toBe(own);
  });
});
