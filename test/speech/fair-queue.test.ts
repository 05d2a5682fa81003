import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FairQueue, type WorkOwner } from '../../shared/engines/core/fair-queue.ts';
import { PocketsphinxSttEngine } from '../../shared/engines/stt/pocketsphinx.ts';
import { FlitePool } from '../../shared/engines/tts/flite-pool.ts';
import { DEFAULT_FLITE_SERVER_BIN } from '../../shared/engines/tts/local.ts';

/**
 * Issue #35 item 3: one developer's queued synthesis delayed another developer's sentence by minutes and a live
 * call's greeting by 60 s. The local TTS workers now take waiting work live first, then the developer served
 * least recently. Order only: nothing here depends on how fast the machine is.
 */
describe('FairQueue', () => {
  const drain = (q: FairQueue<string>) => {
    const out: string[] = [];
    for (let x = q.shift(); x !== undefined; x = q.shift()) out.push(x);
    return out;
  };

  it('alternates between developers whatever order their work arrived in; each keeps its own order', () => {
    const q = new FairQueue<string>();
    for (const id of ['a1', 'a2', 'a3', 'a4', 'a5']) q.push(id, { tenant: 'A' });
    q.push('b1', { tenant: 'B' });
    q.push('b2', { tenant: 'B' });
    q.push('c1', { tenant: 'C' });
    expect(drain(q)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4', 'a5']);
  });

  it('serves a newcomer before the developer it has just served', () => {
    const q = new FairQueue<string>();
    q.push('a1', { tenant: 'A' });
    expect(q.shift()).toBe('a1');
    q.push('a2', { tenant: 'A' });
    q.push('b1', { tenant: 'B' });
    expect(drain(q)).toEqual(['b1', 'a2']);
  });

  it('puts live work before every batch item, in arrival order', () => {
    const q = new FairQueue<string>();
    q.push('a1', { tenant: 'A' });
    q.push('live1', { tenant: 'A', live: true });
    q.push('b1', { tenant: 'B' });
    q.push('live2', { tenant: 'B', live: true });
    expect(q.shift({ liveOnly: true })).toBe('live1');
    expect(q.shift({ liveOnly: true })).toBe('live2');
    expect(q.shift({ liveOnly: true })).toBeUndefined();
    expect(q.length).toBe(2);
    expect(drain(q)).toEqual(['a1', 'b1']);
  });

  it('removes a waiting item (its caller gave up) and drains the rest', () => {
    const q = new FairQueue<string>();
    q.push('a1', { tenant: 'A' });
    q.push('b1', { tenant: 'B' });
    q.push('l1', { live: true });
    expect(q.remove('b1')).toBe(true);
    expect(q.remove('b1')).toBe(false);
    expect(q.remove('l1')).toBe(true);
    expect(q.drain()).toEqual(['a1']);
    expect(q.length).toBe(0);
  });
});

describe('FlitePool order (real flite-server processes)', () => {
  const pools: FlitePool[] = [];
  const pool = (size: number, liveReserve = 0) => {
    const p = new FlitePool({ bin: DEFAULT_FLITE_SERVER_BIN, size, liveReserve });
    pools.push(p);
    return p;
  };
  beforeAll(() => {
    if (!existsSync(DEFAULT_FLITE_SERVER_BIN)) execFileSync('bash', ['scripts/setup.d/40-flite-server.sh']);
  });
  afterAll(() => pools.forEach((p) => p.close()));

  const SENTENCE = 'We are open from eight in the morning until six in the evening.';

  /** Submits each job in order (synchronously, so they queue behind the first) and returns their completion order. */
  async function completionOrder(p: FlitePool, jobs: [string, WorkOwner][]): Promise<string[]> {
    const done: string[] = [];
    await Promise.all(
      jobs.map(([id, owner]) =>
        p.synthesize({ voice: 'kal16', stretch: 1, f0Shift: 0, text: SENTENCE }, undefined, owner).then((r) => {
          expect(r.pcm.length).toBeGreaterThan(0);
          done.push(id);
        }),
      ),
    );
    return done;
  }

  it("developer A queues 5 pieces, B one: B's completes before A's 3rd (here: right after A's first)", async () => {
    const a = { tenant: 'dev-a' };
    const order = await completionOrder(pool(1), [
      ['a1', a],
      ['a2', a],
      ['a3', a],
      ['a4', a],
      ['a5', a],
      ['b1', { tenant: 'dev-b' }],
    ]);
    expect(order.indexOf('b1')).toBeLessThan(order.indexOf('a3'));
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3', 'a4', 'a5']);
  });

  it('a live call overtakes queued batch pieces', async () => {
    const order = await completionOrder(pool(1), [
      ['a1', { tenant: 'dev-a' }],
      ['a2', { tenant: 'dev-a' }],
      ['b1', { tenant: 'dev-b' }],
      ['live', { tenant: 'dev-c', live: true }],
    ]);
    expect(order).toEqual(['a1', 'live', 'b1', 'a2']);
  });

  it('keeps a worker free for live calls: batch work waits for one worker, a live piece takes the other', async () => {
    const p = pool(2, 1);
    const job = { voice: 'kal16', stretch: 1, f0Shift: 0, text: SENTENCE };
    const batch = [
      p.synthesize(job, undefined, { tenant: 'dev-a' }),
      p.synthesize(job, undefined, { tenant: 'dev-b' }),
    ];
    // Dispatch is synchronous: one batch piece runs, the other waits although a second worker could take it.
    expect(p.running).toBe(1);
    const live = p.synthesize(job, undefined, { tenant: 'dev-c', live: true });
    expect(p.running).toBe(2);
    await Promise.all([...batch, live]);
    expect(p.running).toBe(0);
  });

  it('a live piece on a worker does not hold batch work back from the workers batch may use', async () => {
    const p = pool(2, 1);
    const job = { voice: 'kal16', stretch: 1, f0Shift: 0, text: SENTENCE };
    const live = p.synthesize(job, undefined, { tenant: 'dev-c', live: true });
    const batch = p.synthesize(job, undefined, { tenant: 'dev-a' });
    expect(p.running).toBe(2);
    await Promise.all([live, batch]);
  });
});

describe('local STT decoder slots (real pocketsphinx)', () => {
  it('one slot: a live call first, then the developer served least recently, whatever the arrival order', async () => {
    const stt = new PocketsphinxSttEngine({ maxConcurrent: 1 });
    const pcm = Buffer.alloc(16000); // half a second of silence: a short decoder run
    const done: string[] = [];
    const transcribe = (id: string, owner: WorkOwner) =>
      stt
        .transcribe({
          pcm,
          sampleRate: 16000,
          language: 'en',
          mode: 'fast',
          timestamps: 'segment',
          diarize: false,
          owner,
        })
        .then(() => done.push(id));
    const a = { tenant: 'dev-a' };
    await Promise.all([
      transcribe('a1', a),
      transcribe('a2', a),
      transcribe('a3', a),
      transcribe('b1', { tenant: 'dev-b' }),
      transcribe('live', { tenant: 'dev-c', live: true }),
    ]);
    expect(done).toEqual(['a1', 'live', 'b1', 'a2', 'a3']);
  });
});
