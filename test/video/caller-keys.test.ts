// Regression: a caller's X-Provider-Key-<Vendor> header on an async video job was not carried to the worker, so
// the job silently ran on the developer's stored key or the platform's key.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VideoJob } from '../../shared/contracts/video.ts';
import { isVideoFailure } from '../../shared/domains/video/failure.ts';
import { eraseJobKeys, jobKeyHeaders, sealJobKeys } from '../../shared/domains/video/job-keys.ts';
import { startElevenLabsDouble } from '../../support/doubles/elevenlabs.ts';
import type { HttpDouble } from '../../shared/domains/agent-tests/simulators/http-double.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { TEST_ENV, waitForJob } from './helpers.ts';
import { makeMedia, startMediaServer, type LocalServer } from '../../support/doubles/media-server.ts';
import { startVendorDouble, type VendorDouble } from '../../support/doubles/video-vendors.ts';

// Secrets this file hands to the platform: none may be readable in Postgres, Redis or a log line.
const EL_CALLER = 'el-caller-' + randomBytes(12).toString('hex');
const RP_CALLER = 'r8-caller-' + randomBytes(12).toString('hex');
const OPENAI_CALLER = 'sk-caller-' + randomBytes(12).toString('hex');
const EL_PLATFORM = 'el-platform-' + randomBytes(12).toString('hex');
const RP_PLATFORM = 'r8-platform-' + randomBytes(12).toString('hex');
const CALLER_KEYS = [EL_CALLER, RP_CALLER, OPENAI_CALLER];

const REPLICATE_PATHS = /^\/v1\/(models\/sync\/lipsync-2\/predictions|predictions\/)/;

let p: TestPlatform;
let media: LocalServer;
let vendor: VendorDouble;
let elevenlabs: HttpDouble;
let dev: { developerId: string; apiKey: string };
const logLines: string[] = [];

beforeAll(async () => {
  const files = makeMedia();
  [vendor, media, elevenlabs] = await Promise.all([
    startVendorDouble(files['/talk.mp4']!.body, { replicateKeys: [RP_CALLER, RP_PLATFORM] }),
    startMediaServer(files),
    startElevenLabsDouble(),
  ]);
  // The ElevenLabs double accepts only the caller's key: a job that fell back to the platform key would get 401.
  elevenlabs.key = EL_CALLER;
  p = await startTestPlatform({
    roles: ['api', 'cpu', 'gpu'],
    logLines,
    env: {
      ...TEST_ENV,
      VIDEO_VENDOR_POLL_MS: '20',
      REPLICATE_BASE_URL: vendor.replicate.url,
      REPLICATE_API_KEY: RP_PLATFORM,
      ELEVENLABS_BASE_URL: elevenlabs.url,
      ELEVENLABS_API_KEY: EL_PLATFORM,
    },
  });
  dev = await p.developer('pro');
});
afterAll(async () => {
  await p?.close();
  await Promise.all([media?.close(), vendor?.close(), elevenlabs?.close()]);
});

async function submit(type: string, json: unknown, headers: Record<string, string> = {}) {
  const res = await p.request(`/v1/video/${type}`, { method: 'POST', key: dev.apiKey, json, headers });
  return { res, body: (await res.json()) as VideoJob & { error?: { code: string } } };
}

/** Every row of every table, as text (bytea as hex), so a key stored anywhere in clear shows up. */
async function postgresText(): Promise<string> {
  const { rows: tables } = await p.infra.db.query<{ table_name: string }>(
    "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
  );
  const parts: string[] = [];
  for (const { table_name } of tables) {
    const { rows } = await p.infra.db.query<{ t: string }>(`select t::text as t from "${table_name}" t`);
    parts.push(...rows.map((r) => r.t));
  }
  return parts.join('\n');
}

/** Every value under this platform's Redis prefix (BullMQ job hashes, lists, sets, streams). */
async function redisText(): Promise<{ keys: string[]; text: string }> {
  const redis = p.infra.bullRedis;
  const keys = await redis.keys(`${p.config.REDIS_PREFIX}:*`);
  const parts: unknown[] = [];
  for (const k of keys) {
    const type = await redis.type(k);
    if (type === 'hash') parts.push(await redis.hgetall(k));
    else if (type === 'string') parts.push(await redis.get(k));
    else if (type === 'list') parts.push(await redis.lrange(k, 0, -1));
    else if (type === 'set') parts.push(await redis.smembers(k));
    else if (type === 'zset') parts.push(await redis.zrange(k, 0, -1));
    else if (type === 'stream') parts.push(await redis.xrange(k, '-', '+'));
  }
  return { keys, text: JSON.stringify(parts) };
}

function expectNoCallerKeyIn(text: string, where: string): void {
  for (const key of CALLER_KEYS) {
    expect(text.includes(key), `${where} holds a caller key in clear`).toBe(false);
    expect(text.includes(Buffer.from(key).toString('hex')), `${where} holds a caller key as hex`).toBe(false);
  }
}

describe('caller provider keys (X-Provider-Key-*) on async video jobs', () => {
  it('carries them sealed through every dub step to the vendors, bypasses metering, and erases them at the end', async () => {
    const release = vendor.holdJobs();
    const sub = await submit(
      'dub',
      {
        video_url: `${media.url}/speaker.mp4`,
        target_language: 'es',
        tts_provider: 'elevenlabs',
        voice_id: 'el-voice-1',
        lipsync_provider: 'replicate',
      },
      {
        'X-Provider-Key-ElevenLabs': EL_CALLER,
        'X-Provider-Key-Replicate': RP_CALLER,
        // A key for a vendor the job never calls is not kept.
        'X-Provider-Key-OpenAI': OPENAI_CALLER,
      },
    );
    expect(sub.res.status, JSON.stringify(sub.body)).toBe(202);
    expect(sub.res.headers.get('x-usage-bypassed')).toBe('true');
    const id = sub.body.id;

    // Mid-job (the Replicate prediction is held "processing", after the CPU steps synthesized on ElevenLabs).
    try {
      const reached = await waitUntil(async () => {
        if (vendor.replicate.requests.some((c) => c.path.startsWith('/v1/predictions/'))) return 'held at the vendor';
        const j = (await (await p.request(`/v1/video/${id}`, { key: dev.apiKey })).json()) as VideoJob;
        return j.status === 'failed' ? `failed: ${JSON.stringify(j.error)}` : null;
      }, 90_000);
      expect(reached).toBe('held at the vendor');
      expect(elevenlabs.requests.length).toBeGreaterThan(0);
      const { rows: sealed } = await p.infra.db.query<{ vendor: string; ciphertext: Buffer | null; erased_at: Date }>(
        'select vendor, ciphertext, erased_at from video_job_keys where job_id = $1 order by vendor',
        [id],
      );
      expect(sealed.map((r) => r.vendor)).toEqual(['elevenlabs', 'replicate']);
      for (const r of sealed) {
        expect(r.erased_at).toBeNull();
        expect(r.ciphertext!.length).toBeGreaterThan(0);
      }
      expectNoCallerKeyIn(await postgresText(), 'Postgres');
      const redis = await redisText();
      // The inspection is not vacuous: the flow's job hashes are there (their data is only the row id).
      expect(redis.keys.some((k) => k.endsWith(`:${id}-lipsync`))).toBe(true);
      expect(redis.text).toContain(`"data":"{\\"videoJobId\\":\\"${id}\\"}"`);
      expectNoCallerKeyIn(redis.text, 'Redis');
    } finally {
      release();
    }
    const { job } = await waitForJob(p, dev.apiKey, id, 120_000);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');

    // The vendors saw the caller's keys, never the platform's.
    const replicate = vendor.replicate.requests.filter((c) => REPLICATE_PATHS.test(c.path));
    expect(replicate.length).toBeGreaterThan(1);
    for (const c of replicate) expect(c.headers.authorization).toBe(`Bearer ${RP_CALLER}`);
    expect(elevenlabs.requests.length).toBeGreaterThan(0);
    for (const r of elevenlabs.requests) expect(r.headers['xi-api-key']).toBe(EL_CALLER);

    // Erased in the completing transaction; the row stays as the record that caller keys served the job.
    const { rows: after } = await p.infra.db.query(
      'select vendor, key_id, iv, ciphertext, auth_tag, erased_at from video_job_keys where job_id = $1 order by vendor',
      [id],
    );
    expect(after).toHaveLength(2);
    for (const r of after) {
      expect(r).toMatchObject({ key_id: null, iv: null, ciphertext: null, auth_tag: null });
      expect(r.erased_at).toBeInstanceOf(Date);
    }

    // Metered as caller-keyed, like a synchronous route with a header key: recorded, 0 credits.
    const { rows: jobRow } = await p.infra.db.query('select billable from video_jobs where id = $1', [id]);
    expect(jobRow[0].billable).toBe(false);
    // The charge follows the completing transaction (lifecycle.finish), so a poll can see `completed` before it.
    const ledger = await waitUntil(async () => {
      const { rows } = await p.infra.db.query(
        "select billable, credits from credit_ledger where request_id = $1 and status = 'committed'",
        [id],
      );
      return rows.length ? rows : null;
    });
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ billable: false, credits: 0 });

    expectNoCallerKeyIn(await postgresText(), 'Postgres');
    expect(logLines.length).toBeGreaterThan(0);
    expectNoCallerKeyIn(logLines.join(''), 'the logs');
  }, 240_000);

  it('runs as before without a header: the platform key, billable, nothing sealed', async () => {
    const before = vendor.replicate.requests.length;
    const sub = await submit('lipsync', {
      video_url: `${media.url}/talk.mp4`,
      audio_url: `${media.url}/speech.wav`,
      provider: 'replicate',
    });
    expect(sub.res.status).toBe(202);
    expect(sub.res.headers.get('x-usage-bypassed')).toBe('false');
    const { job } = await waitForJob(p, dev.apiKey, sub.body.id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    const calls = vendor.replicate.requests.slice(before).filter((c) => REPLICATE_PATHS.test(c.path));
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) expect(c.headers.authorization).toBe(`Bearer ${RP_PLATFORM}`);
    const { rows } = await p.infra.db.query(
      'select j.billable, (select count(*)::int from video_job_keys k where k.job_id = j.id) as sealed from video_jobs j where id = $1',
      [job.id],
    );
    expect(rows[0]).toEqual({ billable: true, sealed: 0 });
  });

  it('erases the sealed key when the job fails', async () => {
    const sub = await submit(
      'lipsync',
      { video_url: `${media.url}/missing.mp4`, audio_url: `${media.url}/speech.wav`, provider: 'replicate' },
      { 'X-Provider-Key-Replicate': RP_CALLER },
    );
    expect(sub.res.status).toBe(202);
    const { job } = await waitForJob(p, dev.apiKey, sub.body.id);
    expect(job.status).toBe('failed');
    expect(job.error?.code).toBe('input_unreadable');
    const { rows } = await p.infra.db.query('select ciphertext, erased_at from video_job_keys where job_id = $1', [
      job.id,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0].ciphertext).toBeNull();
    expect(rows[0].erased_at).toBeInstanceOf(Date);
  });

  it('opens a sealed key only for its own job, and never falls back once it is erased', async () => {
    const a = await submit('generate', { prompt: 'A', duration_seconds: 1, width: 256, height: 256 });
    const b = await submit('generate', { prompt: 'B', duration_seconds: 1, width: 256, height: 256 });
    // Finished first, so that their own completion does not erase what this test seals onto them.
    await Promise.all([waitForJob(p, dev.apiKey, a.body.id), waitForJob(p, dev.apiKey, b.body.id)]);
    const jobA = { id: a.body.id, owner_id: dev.developerId };
    const jobB = { id: b.body.id, owner_id: dev.developerId };
    await sealJobKeys(p.infra.db, p.config, jobA, new Map([['replicate', RP_CALLER]]));
    expect(await jobKeyHeaders(p.infra, jobA, 'replicate')).toEqual({ 'x-provider-key-replicate': RP_CALLER });
    expect(await jobKeyHeaders(p.infra, jobB, 'replicate')).toEqual({});

    // A sealed key copied onto another job does not open (the job id is authenticated data).
    await p.infra.db.query(
      `insert into video_job_keys (job_id, vendor, key_id, iv, ciphertext, auth_tag)
       select $2, vendor, key_id, iv, ciphertext, auth_tag from video_job_keys where job_id = $1`,
      [jobA.id, jobB.id],
    );
    const copied = await jobKeyHeaders(p.infra, jobB, 'replicate').catch((e: unknown) => e);
    expect(isVideoFailure(copied) && copied.code).toBe('provider_error');

    // A late duplicate run after the job ended fails rather than running on a stored or platform key.
    await eraseJobKeys(p.infra.db, jobA.id);
    const erased = await jobKeyHeaders(p.infra, jobA, 'replicate').catch((e: unknown) => e);
    expect(isVideoFailure(erased) && erased.code).toBe('provider_error');
    expect(String((erased as Error).message)).not.toContain(RP_CALLER);
  });
});
