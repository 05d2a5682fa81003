import type { Db } from '../../shared/kernel/db/pool.ts';
import { expect } from 'vitest';
import { waitUntil } from '../../support/helpers/platform.ts';
import type { Cluster } from './cluster.ts';

/** Submits one async transcription (an uploaded WAV); returns its job id. */
export async function submitTranscription(api: string, key: string, wav: Buffer): Promise<string> {
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'speech.wav');
  const res = await fetch(`${api}/v1/transcribe/async`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  if (res.status !== 202) throw new Error(`transcription not accepted: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** Submits one video generation (the default engine) with a webhook; returns its job id. */
export async function submitVideo(api: string, key: string, webhookUrl: string): Promise<string> {
  const res = await fetch(`${api}/v1/video/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      prompt: 'Nothing accepted is lost',
      duration_seconds: 1,
      width: 256,
      height: 256,
      fps: 8,
      webhook_url: webhookUrl,
    }),
  });
  if (res.status !== 202) throw new Error(`video job not accepted: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

export interface Outcome {
  status: Record<string, string>;
  errors: Record<string, string>;
  /** Committed ledger rows per job (the charge), and rows still reserved. */
  charges: Record<string, number>;
  reserved: number;
}

/** Reads every job's status and its charges straight from Postgres. */
export async function outcome(db: Db, transcriptions: string[], videos: string[]): Promise<Outcome> {
  const ids = [...transcriptions, ...videos];
  const { rows: jobs } = await db.query<{ id: string; status: string; code: string | null }>(
    `select id, status, error->>'code' as code from transcription_jobs where id = any($1)
     union all select id, status, error->>'code' from video_jobs where id = any($1)`,
    [ids],
  );
  const { rows: ledger } = await db.query<{ request_id: string; status: string; n: number }>(
    `select request_id, status, count(*)::int as n from credit_ledger where request_id = any($1)
      group by request_id, status`,
    [ids],
  );
  const out: Outcome = { status: {}, errors: {}, charges: {}, reserved: 0 };
  for (const j of jobs) {
    out.status[j.id] = j.status;
    if (j.code) out.errors[j.id] = j.code;
  }
  for (const id of ids) out.charges[id] = 0;
  for (const l of ledger) {
    if (l.status === 'committed') out.charges[l.request_id] = l.n;
    if (l.status === 'reserved') out.reserved += l.n;
  }
  return out;
}

/** Waits until every job has finished (completed or failed); returns the outcome and the time it took. */
export async function settle(
  c: Cluster,
  transcriptions: string[],
  videos: string[],
  timeoutMs: number,
): Promise<{ result: Outcome; ms: number }> {
  const started = Date.now();
  let last: Outcome | null = null;
  const deadline = started + timeoutMs;
  for (;;) {
    last = await outcome(c.db, transcriptions, videos).catch(() => last);
    const open = last ? Object.values(last.status).filter((s) => s === 'processing' || s === 'pending').length : -1;
    if (last && open === 0) return { result: last, ms: Date.now() - started };
    if (Date.now() > deadline) {
      throw new Error(`jobs still open after ${timeoutMs} ms: ${JSON.stringify(last?.status)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Figures of a scenario, printed for the report: accepted vs completed, duplicate charges, recovery time. */
export function figures(name: string, o: Outcome, webhooks: Map<string, string[]>, videos: string[], ms: number) {
  const all = Object.keys(o.status);
  const completed = all.filter((id) => o.status[id] === 'completed').length;
  const duplicateCharges = Object.values(o.charges).reduce((n, c) => n + Math.max(0, c - 1), 0);
  const webhookDupes = videos.reduce((n, id) => n + Math.max(0, (webhooks.get(id)?.length ?? 0) - 1), 0);
  const line = { scenario: name, accepted: all.length, completed, duplicateCharges, webhookDupes, recoveryMs: ms };
  process.stdout.write(`RESILIENCE ${JSON.stringify(line)}\n`);
  return line;
}

/** Every job completed, charged once (one committed ledger row), no hold left reserved, one webhook per video. */
export async function expectEachOnce(
  c: Cluster,
  settled: Outcome,
  transcriptions: string[],
  videos: string[],
): Promise<Outcome> {
  expect(
    Object.values(settled.status).every((s) => s === 'completed'),
    JSON.stringify(settled),
  ).toBe(true);
  expect(settled.errors).toEqual({});
  // A video job is charged just after it completes, and its webhook follows: wait for both.
  const o = await waitUntil(async () => {
    const now = await outcome(c.db, transcriptions, videos);
    const charged = Object.values(now.charges).every((n) => n >= 1);
    return charged && videos.every((id) => (c.hooks.delivered.get(id)?.length ?? 0) >= 1) && now;
  }, 30_000);
  for (const [id, n] of Object.entries(o.charges)) expect(n, `charges of ${id}`).toBe(1);
  expect(o.reserved).toBe(0);
  for (const id of videos) expect(c.hooks.delivered.get(id), `webhooks of ${id}`).toHaveLength(1);
  return o;
}

/** Submits n transcriptions and n video jobs, interleaved, through the API at `api`. */
export async function submitJobs(
  c: Cluster,
  api: string,
  key: string,
  n: number,
): Promise<{ transcriptions: string[]; videos: string[] }> {
  const transcriptions: string[] = [];
  const videos: string[] = [];
  for (let i = 0; i < n; i++) {
    transcriptions.push(await submitTranscription(api, key, c.wav));
    videos.push(await submitVideo(api, key, c.hooks.url));
  }
  return { transcriptions, videos };
}
