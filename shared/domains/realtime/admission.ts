import { availableParallelism } from 'node:os';
import twilio from 'twilio';
import type { Config } from '../../kernel/config/index.ts';
import type { Infra } from '../../platform/infra.ts';

/**
 * Admission control over the realtime fleet, kept in Redis so the api (which answers Twilio's webhook with TwiML)
 * and every realtime process see one picture:
 *  - `nodes` (zset node → expiry ms) and `caps` (hash node → capacity): each realtime process registers its
 *    capacity and renews it every few seconds (workers/realtime/admission-node.ts); a dead process drops out;
 *  - `slots` (zset session → expiry ms): one per admitted call. Admitting is one Lua script (drop expired
 *    entries, sum the live capacity, add the session if a slot is free), so concurrent requests never overbook.
 *    A slot is held HOLD_MS until a realtime process runs the session and renews it; it is released when the
 *    session ends (or expires if that process dies).
 * With no realtime process registered (a fleet starting), or Redis unreachable, calls are admitted: admission
 * guards latency, it must not become an outage of its own.
 */
export const PENDING_HOLD_MS = 30_000;
export const LIVE_HOLD_MS = 60_000;
export const NODE_TTL_MS = 15_000;

export function admissionKeys(prefix: string) {
  const k = `${prefix}:rt:adm`;
  return { nodes: `${k}:nodes`, caps: `${k}:caps`, slots: `${k}:slots` };
}

/**
 * This process's capacity: REALTIME_MAX_SESSIONS, else calls per core × cores ÷ processes sharing them. A phone line
 * heard by the local streaming recogniser costs more CPU per call: then the smaller REALTIME_LOCAL_STT_CALLS_PER_CORE.
 */
export function nodeCapacity(c: Config): number {
  if (c.REALTIME_MAX_SESSIONS > 0) return c.REALTIME_MAX_SESSIONS;
  const perCore = phoneSttIsLocal(c)
    ? Math.min(c.REALTIME_CALLS_PER_CORE, c.REALTIME_LOCAL_STT_CALLS_PER_CORE)
    : c.REALTIME_CALLS_PER_CORE;
  return Math.max(1, Math.floor((perCore * availableParallelism()) / Math.max(1, c.PROCESSES)));
}

/** Phone calls here are heard locally: chosen, or the phone STT has no platform key and the local fallback is on. */
function phoneSttIsLocal(c: Config): boolean {
  const p = c.REALTIME_PHONE_STT_PROVIDER;
  return p === 'default' || (c.REALTIME_PHONE_STT_LOCAL_FALLBACK && !c.vendors.platformKeys[p]);
}

const ADMIT = `
local now = tonumber(ARGV[1])
redis.call('zremrangebyscore', KEYS[1], '-inf', now)
local live = redis.call('zrange', KEYS[1], 0, -1)
local cap = 0
for _, n in ipairs(live) do cap = cap + tonumber(redis.call('hget', KEYS[2], n) or '0') end
redis.call('zremrangebyscore', KEYS[3], '-inf', now)
local used = redis.call('zcard', KEYS[3])
if #live == 0 then return {1, -1, used} end
if redis.call('zscore', KEYS[3], ARGV[2]) then return {1, cap, used} end
if used >= cap then return {0, cap, used} end
redis.call('zadd', KEYS[3], now + tonumber(ARGV[3]), ARGV[2])
return {1, cap, used + 1}
`;

export interface Admission {
  admitted: boolean;
  /** Fleet capacity (-1: no realtime process registered) and slots in use after this decision. */
  capacity: number;
  used: number;
}

/** Takes a slot for `sessionId` when the fleet has one. */
export async function admitSession(infra: Infra, sessionId: string): Promise<Admission> {
  if (!infra.config.REALTIME_ADMISSION) return { admitted: true, capacity: -1, used: 0 };
  const k = admissionKeys(infra.config.REDIS_PREFIX);
  try {
    const [ok, capacity, used] = (await infra.redis.eval(
      ADMIT,
      3,
      k.nodes,
      k.caps,
      k.slots,
      Date.now(),
      sessionId,
      PENDING_HOLD_MS,
    )) as [number, number, number];
    return { admitted: ok === 1, capacity, used };
  } catch (e) {
    infra.log.warn({ err: (e as Error).message }, 'admission check failed; admitting the call');
    return { admitted: true, capacity: -1, used: 0 };
  }
}

/** Free slots across the fleet (null: unknown — no process registered, or admission off). Reads only. */
export async function fleetHeadroom(infra: Infra): Promise<number | null> {
  if (!infra.config.REALTIME_ADMISSION) return null;
  const k = admissionKeys(infra.config.REDIS_PREFIX);
  const now = Date.now();
  const nodes = await infra.redis.zrangebyscore(k.nodes, now, '+inf');
  if (!nodes.length) return null;
  const caps = await infra.redis.hmget(k.caps, ...nodes);
  const capacity = caps.reduce((s, c) => s + Number(c ?? 0), 0);
  const used = await infra.redis.zcount(k.slots, now, '+inf');
  return capacity - used;
}

/**
 * What a Twilio call past capacity hears: a busy signal, or the configured message and a hang-up. An answered call
 * (outbound: the callee picked up) cannot be given a busy signal any more, and a bare hang-up would sound like a
 * dropped line: it always hears the message.
 */
export function refusalTwiml(c: Config, opts: { answered?: boolean } = {}): string {
  const vr = new twilio.twiml.VoiceResponse();
  // <Reject> only applies before the call is answered (an inbound call).
  if (c.REALTIME_ADMISSION_ANSWER === 'busy' && !opts.answered) vr.reject({ reason: 'busy' });
  else {
    vr.say(c.REALTIME_ADMISSION_MESSAGE);
    vr.hangup();
  }
  return vr.toString();
}
