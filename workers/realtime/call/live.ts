import type { SessionEndReason } from '../../../shared/contracts/sessions.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import type { CallSession } from './call-session.ts';

const live = new WeakMap<Infra, Set<CallSession>>();

/** Tracks a running session so a shutdown can end it (and store its trace and recording) before infra closes. */
export function trackSession(infra: Infra, s: CallSession): void {
  let set = live.get(infra);
  if (!set) live.set(infra, (set = new Set()));
  set.add(s);
  void s.done.finally(() => set.delete(s));
}

/** Ends every live session of this process and waits until each has written its trace. */
export async function endLiveSessions(infra: Infra, reason: SessionEndReason): Promise<void> {
  const set = live.get(infra);
  if (!set) return;
  await Promise.all([...set].map((s) => s.stop(reason)));
}

/** Ids of the sessions this process is running. */
export function liveSessionIds(infra: Infra): string[] {
  return [...(live.get(infra) ?? [])].map((s) => s.id);
}
