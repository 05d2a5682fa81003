import { maskSecret as mask } from './portal-webhooks.ts';
import { ensureAccount } from '../../shared/platform/metering/accounts.ts';
import { dailyCreditsByCategory } from '../../shared/platform/metering/ledger-reads.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { decodeCursor, toPage, type Page } from '../../shared/kernel/pagination.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import type { VideoJob } from '../../shared/contracts/video.ts';
import { toVideoJob } from '../../shared/domains/video/present.ts';
import { listOwnedVideoJobs, ownedOutputKey } from '../../shared/domains/video/store.ts';
import { listEndpoints } from '../../shared/domains/webhooks/endpoints.ts';
import { recentMessageOutcomes } from '../../shared/domains/webhooks/outbox.ts';

export const USAGE_CATEGORIES = ['tts', 'stt', 'llm', 'rag', 'video', 'session'] as const;
const DAY_MS = 86_400_000;
const MAX_DAYS = 366;

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

function parseDay(s: string, param: string): number {
  const t = Date.parse(`${s}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s) || Number.isNaN(t) || isoDay(new Date(t)) !== s) {
    throw ApiError.validation(`${param} must be a date, YYYY-MM-DD`, param);
  }
  return t;
}

/**
 * Credits by UTC day and category from the ledger (refunds excluded, holds in flight included, as in GET
 * /v1/usage), for every day of [from, to] and every category, zeros included, so a chart needs no gap filling.
 * Defaults to the current billing period.
 */
export async function dailyUsage(infra: Infra, developerId: string, q: { from?: string; to?: string }) {
  let from: number;
  let to: number;
  if (q.from && q.to) {
    from = parseDay(q.from, 'from');
    to = parseDay(q.to, 'to');
  } else {
    const a = await ensureAccount(infra.db, infra.config, developerId);
    from = q.from ? parseDay(q.from, 'from') : Date.parse(`${isoDay(a.period_start)}T00:00:00Z`);
    to = q.to ? parseDay(q.to, 'to') : Date.parse(`${isoDay(new Date(a.period_end.getTime() - 1))}T00:00:00Z`);
  }
  if (to < from) throw ApiError.validation('to must not be before from', 'to');
  if ((to - from) / DAY_MS + 1 > MAX_DAYS) throw ApiError.validation(`at most ${MAX_DAYS} days at once`, 'from');
  const rows = await dailyCreditsByCategory(infra.db, developerId, new Date(from), new Date(to + DAY_MS));
  const byKey = new Map(rows.map((r) => [`${r.day}/${r.category}`, r.credits]));
  const data = [];
  for (let t = from; t <= to; t += DAY_MS) {
    const date = isoDay(new Date(t));
    for (const category of USAGE_CATEGORIES)
      data.push({ date, category, credits: byKey.get(`${date}/${category}`) ?? 0 });
  }
  return { period: { start: isoDay(new Date(from)), end: isoDay(new Date(to)) }, data };
}

/** The developer's video jobs, newest first, each as GET /v1/video/:id shows it. */
export async function listVideoJobs(
  infra: Infra,
  developerId: string,
  limit: number,
  cursor: string | undefined,
): Promise<Page<VideoJob>> {
  const after = decodeCursor(cursor);
  const rows = await listOwnedVideoJobs(infra.db, developerId, limit + 1, after);
  const page = toPage(rows, limit, (r) => r);
  const ttl = infra.config.VIDEO_URL_TTL_SECONDS;
  return { ...page, data: await Promise.all(page.data.map((r) => toVideoJob(r, infra.storage, ttl))) };
}

/**
 * Webhook signing secrets (one per address; masked unless revealed) and the most recent notifications with their
 * outcome: status, attempts, the HTTP status of the last attempt.
 */
export async function webhookOverview(infra: Infra, developerId: string, reveal: boolean) {
  const endpoints = await listEndpoints(infra.db, developerId, 100);
  const deliveries = await recentMessageOutcomes(infra.db, developerId, 50);
  const show = (s: string) => (reveal ? s : mask(s));
  return {
    signingSecret: endpoints[0] ? show(endpoints[0].secret) : null,
    revealed: reveal,
    endpoints: endpoints.map((e) => ({
      id: e.id,
      url: e.url,
      signingSecret: show(e.secret),
      disabled: e.disabled_at !== null,
      createdAt: e.created_at.toISOString(),
    })),
    deliveries: deliveries.map((d) => ({
      id: d.id,
      event: d.event_type,
      url: d.url,
      status: d.status,
      attempts: d.attempts,
      lastStatusCode: d.last_status_code,
      lastError: d.last_error,
      createdAt: d.created_at.toISOString(),
      deliveredAt: d.delivered_at?.toISOString() ?? null,
    })),
  };
}

/**
 * The stored output of one of the developer's finished video jobs, for the portal's player: same-origin, because
 * the presigned `video_url` points at the storage server's origin, which the portal's CSP (`media-src 'self'`)
 * does not allow.
 */
export async function videoOutputKey(infra: Infra, developerId: string, jobId: string): Promise<string> {
  const key = await ownedOutputKey(infra.db, developerId, jobId);
  if (!key) throw ApiError.notFound('video output', jobId);
  return key;
}
