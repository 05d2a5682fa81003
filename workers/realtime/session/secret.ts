import { randomBytes } from 'node:crypto';
import type { Infra } from '../../../shared/runtime/infra.ts';

const generated = new WeakMap<Infra, string>();

/**
 * The session-token secret: REALTIME_SESSION_SECRET, or (unset) a random per-process secret that only the
 * one-process mode can use, since api and realtime must share it. A warning says so once.
 */
export function sessionSecret(infra: Infra): string {
  if (infra.config.REALTIME_SESSION_SECRET) return infra.config.REALTIME_SESSION_SECRET;
  let s = generated.get(infra);
  if (!s) {
    s = randomBytes(32).toString('base64url');
    generated.set(infra, s);
    infra.log.warn(
      { component: 'realtime' },
      'REALTIME_SESSION_SECRET is unset: using a per-process secret (set it when api and realtime run apart)',
    );
  }
  return s;
}
