import { createHash, randomBytes } from 'node:crypto';
import { developerTierSql } from '../../kernel/db/developers.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import type { Clock } from './clock.ts';

export interface PortalSession {
  idHash: Buffer;
  /** Null while the verified phone belongs to no developer and has not given a name yet. */
  developerId: string | null;
  /** The developer's tier now (it changes with billing), null while signing up. */
  tier: string | null;
  phone: string;
  csrfToken: string;
  createdAt: Date;
  lastSeenAt: Date;
  idleExpiresAt: Date;
  absoluteExpiresAt: Date;
}

interface Row {
  id_hash: Buffer;
  developer_id: string | null;
  phone: string;
  csrf_token: string;
  created_at: Date;
  last_seen_at: Date;
  tier?: string | null;
}

/** A request within this long of the last recorded one does not write last_seen_at again. */
const TOUCH_EVERY_MS = 60_000;

const hashId = (id: string) => createHash('sha256').update(id).digest();

/**
 * Portal sessions in Postgres. Postgres rather than Redis: "sign out everywhere" is one indexed delete by developer,
 * a session survives a Redis flush (Redis runs with noeviction but holds queues and caches), and the rows cascade
 * away with their developer. A lookup is one primary-key read; last_seen_at is written at most once a minute.
 * The cookie holds a 256-bit random id; the table holds its SHA-256.
 */
export class SessionStore {
  constructor(
    private readonly db: Queryable,
    private readonly limits: { idleMs: number; absoluteMs: number },
    private readonly clock: Clock,
  ) {}

  /** A new session (always a new id: sign-in never reuses an id the browser had, against session fixation). */
  async create(phone: string, developerId: string | null): Promise<{ id: string; session: PortalSession }> {
    const id = randomBytes(32).toString('base64url');
    const now = new Date(this.clock.now());
    const { rows } = await this.db.query<Row>(
      `insert into portal_sessions (id_hash, developer_id, phone, csrf_token, created_at, last_seen_at)
       values ($1, $2, $3, $4, $5, $5) returning *`,
      [hashId(id), developerId, phone, randomBytes(32).toString('base64url'), now],
    );
    return { id, session: this.toSession(rows[0]!) };
  }

  /** The live session for a cookie value, or null. An expired session is deleted on the way. */
  async get(id: string | undefined): Promise<PortalSession | null> {
    if (!id || id.length > 100) return null;
    const idHash = hashId(id);
    const { rows } = await this.db.query<Row>(
      `select s.*, ${developerTierSql('s.developer_id')} as tier from portal_sessions s where s.id_hash = $1`,
      [idHash],
    );
    if (!rows[0]) return null;
    const s = this.toSession(rows[0]);
    const now = this.clock.now();
    if (now >= s.idleExpiresAt.getTime() || now >= s.absoluteExpiresAt.getTime()) {
      await this.db.query(`delete from portal_sessions where id_hash = $1`, [idHash]);
      return null;
    }
    if (now - s.lastSeenAt.getTime() >= TOUCH_EVERY_MS) {
      await this.db.query(`update portal_sessions set last_seen_at = $2 where id_hash = $1`, [idHash, new Date(now)]);
      return this.toSession({ ...rows[0], last_seen_at: new Date(now) });
    }
    return s;
  }

  async end(id: string): Promise<void> {
    await this.db.query(`delete from portal_sessions where id_hash = $1`, [hashId(id)]);
  }

  async endAllOf(developerId: string): Promise<number> {
    const r = await this.db.query(`delete from portal_sessions where developer_id = $1`, [developerId]);
    return r.rowCount ?? 0;
  }

  /** Deletes sessions past either limit (called now and then at sign-in; reads check expiry themselves). */
  async sweep(): Promise<void> {
    const now = this.clock.now();
    await this.db.query(`delete from portal_sessions where last_seen_at < $1 or created_at < $2`, [
      new Date(now - this.limits.idleMs),
      new Date(now - this.limits.absoluteMs),
    ]);
  }

  private toSession(r: Row): PortalSession {
    const absolute = r.created_at.getTime() + this.limits.absoluteMs;
    return {
      idHash: r.id_hash,
      developerId: r.developer_id,
      tier: r.tier ?? null,
      phone: r.phone,
      csrfToken: r.csrf_token,
      createdAt: r.created_at,
      lastSeenAt: r.last_seen_at,
      idleExpiresAt: new Date(Math.min(r.last_seen_at.getTime() + this.limits.idleMs, absolute)),
      absoluteExpiresAt: new Date(absolute),
    };
  }
}
