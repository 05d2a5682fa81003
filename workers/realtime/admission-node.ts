import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { admissionRefused, realtimeCapacity, realtimeHeadroom } from '../../shared/kernel/observability/metrics.ts';
import { admissionKeys, LIVE_HOLD_MS, nodeCapacity, NODE_TTL_MS } from '../../shared/domains/realtime/admission.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { liveSessionIds } from './call/live.ts';

export interface AdmissionNode {
  capacity: number;
  /** 503 `over_capacity` (Retry-After) when this process runs as many sessions as it can hold. */
  guard(): void;
  stop(): Promise<void>;
}

const TICK_MS = 1000;

/**
 * This realtime process in the fleet's admission picture (shared/domains/realtime/admission.ts): every second it renews
 * its capacity, renews the slots of the sessions it runs, releases those of sessions that ended, and sets the
 * capacity and headroom gauges. On stop it leaves the fleet, so the api stops counting its capacity.
 */
export function startAdmissionNode(infra: Infra): AdmissionNode {
  const c = infra.config;
  const capacity = nodeCapacity(c);
  const id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const k = admissionKeys(c.REDIS_PREFIX);
  let known = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  realtimeCapacity.set(capacity);

  const tick = async () => {
    const live = liveSessionIds(infra);
    realtimeHeadroom.set(capacity - live.length);
    if (!c.REALTIME_ADMISSION) return;
    const now = Date.now();
    const m = infra.redis
      .multi()
      .zadd(k.nodes, now + NODE_TTL_MS, id)
      .hset(k.caps, id, capacity);
    for (const s of live) m.zadd(k.slots, now + LIVE_HOLD_MS, s);
    const ended = [...known].filter((s) => !live.includes(s));
    if (ended.length) m.zrem(k.slots, ...ended);
    await m.exec();
    known = new Set(live);
  };
  const loop = () => {
    void tick()
      .catch((e: Error) => infra.log.warn({ err: e.message }, 'admission heartbeat failed; retrying'))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, TICK_MS);
      });
  };
  loop();

  return {
    capacity,
    guard() {
      if (!c.REALTIME_ADMISSION || liveSessionIds(infra).length < capacity) return;
      admissionRefused.inc({ transport: 'direct' });
      const retryAfter = c.REALTIME_ADMISSION_RETRY_AFTER_SECONDS;
      throw new ApiError('over_capacity', { retryAfter }, null, { 'retry-after': String(retryAfter) });
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await infra.redis
        .multi()
        .zrem(k.nodes, id)
        .hdel(k.caps, id)
        .zrem(k.slots, ...known, '-')
        .exec()
        .catch(() => {});
    },
  };
}
