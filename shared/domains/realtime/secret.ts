import { randomBytes } from 'node:crypto';
import { ConfigError, type Config } from '../../kernel/config/index.ts';
import type { Infra } from '../../platform/infra.ts';

const generated = new WeakMap<Infra, string>();

/**
 * Whether this process may invent the session-token secret: only the one-process mode, where the one process runs
 * both the api (which mints tokens) and the realtime role (which checks them), outside production, where a
 * restart would silently invalidate every token in flight. PROCESSES > 1 runs copies that could not share it.
 */
export function mayInventSessionSecret(config: Config, roles: readonly string[]): boolean {
  return (
    roles.includes('api') && roles.includes('realtime') && config.PROCESSES === 1 && config.NODE_ENV !== 'production'
  );
}

/**
 * Boot check: a process that mints or checks session tokens without REALTIME_SESSION_SECRET is refused unless it
 * may invent one (above). Roles that do neither (cpu, gpu) need no secret.
 */
export function assertSessionSecret(config: Config, roles: readonly string[]): void {
  if (config.REALTIME_SESSION_SECRET) return;
  if (!roles.includes('api') && !roles.includes('realtime')) return;
  if (mayInventSessionSecret(config, roles)) return;
  const why =
    config.NODE_ENV === 'production'
      ? 'in production'
      : config.PROCESSES > 1
        ? 'when PROCESSES > 1 (each copy would invent its own)'
        : `when api and realtime run in separate processes (this one runs ${roles.join(',')})`;
  throw new ConfigError(
    `REALTIME_SESSION_SECRET is required ${why}: set the same ≥ 32-character value on every api and realtime ` +
      'process (generate with `openssl rand -base64 32`).',
  );
}

/**
 * The session-token secret: REALTIME_SESSION_SECRET, or (unset, which the boot check allows only in the
 * one-process mode) a random per-process secret, logged once when it is made.
 */
export function sessionSecret(infra: Infra): string {
  if (infra.config.REALTIME_SESSION_SECRET) return infra.config.REALTIME_SESSION_SECRET;
  let s = generated.get(infra);
  if (!s) {
    s = randomBytes(32).toString('base64url');
    generated.set(infra, s);
    infra.log.warn(
      { component: 'realtime' },
      'REALTIME_SESSION_SECRET is unset: using a random per-process secret (one-process mode only)',
    );
  }
  return s;
}
