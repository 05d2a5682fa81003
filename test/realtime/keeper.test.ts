import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWav } from '../../shared/kernel/audio/wav.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import { keepSessions } from '../../workers/realtime/call/keeper.ts';
import { recordingSpillPath, StereoRecorder } from '../../workers/realtime/pipeline/output/recorder.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

let p: TestPlatform;
let key: string;
let agentId: string;
const log = createLogger('silent');

beforeAll(async () => {
  p = await startTestPlatform({
    roles: ['api', 'realtime'],
    env: {
      PUBLIC_BASE_URL: 'https://voice.example.com',
      REALTIME_SESSION_SECRET: 'keeper-secret-keeper-secret-keeper-42',
      DEEPGRAM_API_KEY: 'dg-unused',
    },
  });
  ({ apiKey: key } = await p.developer('pro'));
  const a = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: { name: 'Keeper', systemPrompt: 'You answer.', firstMessage: 'Hi.', llmModel: 'gpt-4o-mini' },
  });
  agentId = ((await a.json()) as { id: string }).id;
});
afterAll(() => p?.close());

/** A pending session made the way Twilio's webhook would (POST /v1/sessions/twilio). */
async function twilioSession(): Promise<string> {
  const r = await p.request('/v1/sessions/twilio', {
    method: 'POST',
    key,
    json: { agentId, from: '+15550001111', to: '+15550002222' },
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { sessionId: string }).sessionId;
}

/** The state a realtime process leaves when it dies mid-call: an active row and a spill file, 12 s of audio. */
async function crashedCall(sessionId: string, callSid: string, lastBeatSecondsAgo: number) {
  await p.infra.db.query(
    `update rt_sessions set status = 'active', call_sid = $2, started_at = now() - interval '5 minutes',
       heartbeat_at = now() - make_interval(secs => $3) where id = $1`,
    [sessionId, callSid, lastBeatSecondsAgo],
  );
  const rec = new StereoRecorder(8000, 3600, recordingSpillPath(p.config.REDIS_PREFIX, sessionId));
  rec.addAgent(Int16Array.from({ length: 8000 }, () => -500)); // the greeting, first second
  for (let i = 0; i < 600; i++) rec.addCaller(Int16Array.from({ length: 160 }, () => 1000));
  await rec.spilled();
  return rec;
}

const session = async (id: string) =>
  (
    await p.infra.db.query<{ status: string; end_reason: string | null; recording_key: string | null }>(
      'select status, end_reason, recording_key from rt_sessions where id = $1',
      [id],
    )
  ).rows[0]!;

describe('session keeper', () => {
  it('ends sessions whose process died, recovers their spilled recording, expires unclaimed tokens', async () => {
    const lostId = await twilioSession();
    const liveId = await twilioSession();
    const unclaimedId = await twilioSession();
    await crashedCall(lostId, 'CAlost0001', 600);
    await crashedCall(liveId, 'CAlive0001', 1); // another process's call, still beating
    await p.infra.db.query(`update rt_sessions set expires_at = now() - interval '1 second' where id = $1`, [
      unclaimedId,
    ]);

    await keepSessions(p.infra, log);

    expect(await session(lostId)).toMatchObject({ status: 'failed', end_reason: 'worker-lost' });
    expect((await session(lostId)).recording_key).toMatch(new RegExp(`/recordings/${lostId}\\.wav$`));
    expect(existsSync(recordingSpillPath(p.config.REDIS_PREFIX, lostId))).toBe(false);
    const res = await p.request('/v1/recordings/CAlost0001', { key });
    expect(res.status).toBe(200);
    const wav = parseWav(Buffer.from(await res.arrayBuffer()));
    expect(wav.channels).toBe(2);
    // What had reached the disk: the first 10 s (the last seconds were in the dead process's memory).
    expect(wav.data.length / 4 / 8000).toBe(10);
    expect(wav.data.readInt16LE(0)).toBe(1000);
    expect(wav.data.readInt16LE(2)).toBe(-500);

    const rc = await p.request(`/v1/observability/calls/CAlost0001/root-cause`, { key });
    const issues = ((await rc.json()) as { issues: Array<{ type: string }> }).issues;
    expect(issues.map((i) => i.type)).toContain('worker_lost');

    expect(await session(liveId)).toMatchObject({ status: 'active', recording_key: null });
    expect(existsSync(recordingSpillPath(p.config.REDIS_PREFIX, liveId))).toBe(true);
    expect((await session(unclaimedId)).status).toBe('expired');

    // Idempotent: a second pass (or another process's) changes nothing.
    const again = await keepSessions(p.infra, log);
    expect(again.lost).not.toContain(lostId);
    expect(again.recovered).toEqual([]);
  });
});
