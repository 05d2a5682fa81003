import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  allowedCpus,
  chooseBatchCpus,
  formatCpuList,
  parseCpuList,
  resolveBatchCpus,
} from '../../shared/kernel/process/cpu-affinity.ts';
import { spawnChild } from '../../shared/kernel/process/spawner.ts';
import { loadConfig } from '../../shared/kernel/config/index.ts';

describe('cpu lists (taskset -c, Cpus_allowed_list)', () => {
  it('parses numbers and ranges, sorted and each once', () => {
    expect(parseCpuList('3')).toEqual([3]);
    expect(parseCpuList('0-3')).toEqual([0, 1, 2, 3]);
    expect(parseCpuList('5, 0-2,2')).toEqual([0, 1, 2, 5]);
    expect(parseCpuList(' 8-9 ')).toEqual([8, 9]);
  });

  it('refuses what is not a cpu list', () => {
    for (const bad of ['', 'a', '1-', '-1', '3-1', '1,,2', '1:2', '0-99999', '0x1']) {
      expect(() => parseCpuList(bad), bad).toThrow();
    }
  });

  it('writes the shortest list: consecutive cpus as ranges', () => {
    expect(formatCpuList([1])).toBe('1');
    expect(formatCpuList([0, 1, 2, 3])).toBe('0-3');
    expect(formatCpuList([0, 2, 3, 4, 7])).toBe('0,2-4,7');
    expect(formatCpuList([])).toBe('');
  });

  it("reads the process's allowed cpus from /proc/self/status, not the machine's", () => {
    const status = 'Name:\tnode\nCpus_allowed:\t0c\nCpus_allowed_list:\t2-3\nMems_allowed_list:\t0\n';
    expect(allowedCpus(status)).toEqual([2, 3]);
    expect(allowedCpus('Name:\tnode\n')).toBeNull();
    // This process: whatever it reads is what the kernel lets it run on.
    const mine = allowedCpus();
    expect(mine === null || mine.length > 0).toBe(true);
  });
});

describe('the batch work cpus (SPEECH_LOCAL_BATCH_CPUS)', () => {
  it('by default leaves the lowest allowed cpu to the live work and pins the batch work to the rest', () => {
    expect(chooseBatchCpus('', [0, 1]).pinning?.list).toBe('1');
    expect(chooseBatchCpus('', [0, 1, 2, 3]).pinning?.list).toBe('1-3');
    // A cpuset that leaves this process cpus 4, 6 and 7: the live work keeps 4.
    expect(chooseBatchCpus('', [4, 6, 7]).pinning?.list).toBe('6-7');
  });

  it('pins nothing on one cpu, with `all`, or where the allowed cpus are unknown', () => {
    expect(chooseBatchCpus('', [3])).toMatchObject({ pinning: null, reason: expect.stringContaining('one cpu') });
    expect(chooseBatchCpus('all', [0, 1])).toMatchObject({ pinning: null });
    expect(chooseBatchCpus('', null)).toMatchObject({ pinning: null });
  });

  it('takes an explicit list as far as the process may use it', () => {
    expect(chooseBatchCpus('2-3', [0, 1, 2, 3]).pinning?.cpus).toEqual([2, 3]);
    expect(chooseBatchCpus('1-5', [0, 1, 2]).pinning?.list).toBe('1-2');
    expect(chooseBatchCpus('6-7', [0, 1])).toMatchObject({
      pinning: null,
      reason: expect.stringContaining('none of cpus 6-7'),
    });
    // Every allowed cpu is no pinning at all.
    expect(chooseBatchCpus('0-7', [0, 1])).toMatchObject({ pinning: null });
  });

  it('is checked when the config is loaded', () => {
    expect(loadConfig({ SPEECH_LOCAL_BATCH_CPUS: '1-3' }).SPEECH_LOCAL_BATCH_CPUS).toBe('1-3');
    expect(loadConfig({ SPEECH_LOCAL_BATCH_CPUS: 'all' }).SPEECH_LOCAL_BATCH_CPUS).toBe('all');
    expect(() => loadConfig({ SPEECH_LOCAL_BATCH_CPUS: 'cpu1' })).toThrow(/SPEECH_LOCAL_BATCH_CPUS/);
  });
});

const allowed = allowedCpus() ?? [];
const hasTaskset = spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;

describe('pinning a child process', () => {
  it.skipIf(allowed.length < 2 || !hasTaskset)(
    'starts it on the chosen cpus, same pid (skipped: needs taskset and two allowed cpus)',
    async () => {
      const choice = resolveBatchCpus('');
      expect(choice.pinning).not.toBeNull();
      const child = spawnChild('cat', [], { stdio: ['pipe', 'pipe', 'ignore'], cpus: choice.pinning! });
      try {
        // cat echoes a line once it runs, i.e. once taskset has exec'd it: its status is then cat's own.
        const echoed = new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
        child.stdin!.write('x\n');
        await echoed;
        const { readFile } = await import('node:fs/promises');
        const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
        expect(/^Name:\s*(\S+)/m.exec(status)?.[1]).toBe('cat');
        expect(allowedCpus(status)).toEqual(choice.pinning!.cpus);
      } finally {
        child.kill('SIGKILL');
      }
    },
  );
});
