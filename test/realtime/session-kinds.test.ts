import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callReplayProgress } from '../../shared/domains/agent-tests/replay/store.ts';
import { attachCallSession } from '../../shared/domains/campaigns/store.ts';
import { markSessionStarted } from '../../shared/domains/realtime/sessions.ts';
import { newId } from '../../shared/kernel/ids.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * The calls list says what kind of call each session was (inbound, outbound, campaign, browser, test, replay) and
 * filters by kind and by end reason, validated like every query (docs/realtime.md, "Observability").
 */
let p: TestPlatform;
let dev: { developerId: string; apiKey: string };
const ids: Record<string, string> = {};

async function session(kind: string, channel: 'twilio' | 'direct', direction: string, endReason: string) {
  const id = newId('session');
  await p.infra.db.query(
    `insert into rt_sessions (id, developer_id, agent_id, channel, direction, status, end_reason, started_at, ended_at)
     values ($1, $2, 'agt_kinds', $3, $4, 'completed', $5, now(), now())`,
    [id, dev.developerId, channel, direction, endReason],
  );
  ids[kind] = id;
  return id;
}

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  dev = await p.developer();
  const db = p.infra.db;
  await session('inbound', 'twilio', 'inbound', 'caller-hangup');
  await session('outbound', 'twilio', 'outbound', 'voicemail-left');
  await session('browser', 'direct', 'inbound', 'max-credits');
  // An agent test's call: started on a test platform, which labels it at the start.
  await startedOnTestPlatform('test');
  // A replay's run: also started on a test platform, and relabelled when the replay names it.
  const replay = await startedOnTestPlatform('replay');
  const replayId = newId('callReplay');
  await db.query(
    `insert into call_replays (id, developer_id, call_id, session_id, agent_id, agent_version_now, status)
     values ($1, $2, 'CAorig', $3, 'agt_kinds', 1, 'running')`,
    [replayId, dev.developerId, ids.inbound],
  );
  await callReplayProgress(db, replayId, 1, replay);
  // A campaign's attempt.
  const campaign = await session('campaign', 'twilio', 'outbound', 'agent-ended');
  const cid = newId('campaign');
  const rid = newId('recipient');
  await db.query(
    `insert into campaigns (id, developer_id, agent_id, from_number, status, max_concurrency, hours_start, hours_end,
       time_zone, retry_max_attempts, retry_backoff_seconds, retry_on)
     values ($1, $2, 'agt_kinds', '+15550100000', 'completed', 1, '00:00', '24:00', 'UTC', 1, 60, '{}')`,
    [cid, dev.developerId],
  );
  await db.query(
    `insert into campaign_recipients (id, campaign_id, idx, phone, state) values ($1, $2, 0, '+15550100001', 'done')`,
    [rid, cid],
  );
  const callId = newId('campaignCall');
  await db.query(
    `insert into campaign_calls (id, campaign_id, recipient_id, attempt, status) values ($1, $2, $3, 1, 'completed')`,
    [callId, cid, rid],
  );
  expect(await attachCallSession(db, callId, { sessionId: campaign, callSid: null })).toBe(true);
}, 60_000);
afterAll(() => p?.close());

/** A session recorded the way a call on an agent test's private platform starts, then ended. */
async function startedOnTestPlatform(kind: string) {
  const id = newId('session');
  await markSessionStarted(p.infra.db, id, {
    developerId: dev.developerId,
    agentId: 'agt_kinds',
    channel: 'twilio',
    sttProvider: 'simulated',
    ttsProvider: 'flite',
    llmProvider: 'scripted',
    kind: 'test',
  });
  await p.infra.db.query(
    `update rt_sessions set status = 'completed', end_reason = 'caller-hangup', ended_at = now() where id = $1`,
    [id],
  );
  ids[kind] = id;
  return id;
}

async function list(query: string) {
  const res = await p.request(`/v1/observability/sessions?limit=50${query}`, { key: dev.apiKey });
  return { status: res.status, body: (await res.json()) as { data: Array<{ id: string; kind: string }> } };
}

describe('session kinds', () => {
  it('labels each session with its kind, on the list and on the detail', async () => {
    const { status, body } = await list('');
    expect(status).toBe(200);
    const kinds = Object.fromEntries(body.data.map((s) => [s.id, s.kind]));
    for (const [kind, id] of Object.entries(ids)) expect(kinds[id], kind).toBe(kind);
    const d = await p.request(`/v1/observability/sessions/${ids.replay}`, { key: dev.apiKey });
    expect(((await d.json()) as { kind: string }).kind).toBe('replay');
  });

  it('filters by kind and by end reason, and pages through a filtered list', async () => {
    for (const kind of Object.keys(ids)) {
      const { body } = await list(`&kind=${kind}`);
      expect(body.data.map((s) => s.id)).toEqual([ids[kind]]);
    }
    const hangups = await list('&endReason=caller-hangup');
    expect(hangups.body.data.map((s) => s.id).sort()).toEqual([ids.inbound, ids.test, ids.replay].sort());
    const both = await list('&endReason=caller-hangup&kind=test');
    expect(both.body.data.map((s) => s.id)).toEqual([ids.test]);
    const page1 = await p.request('/v1/observability/sessions?limit=1&endReason=caller-hangup', { key: dev.apiKey });
    const b1 = (await page1.json()) as { data: Array<{ id: string }>; nextCursor: string; hasMore: boolean };
    expect(b1.hasMore).toBe(true);
    const page2 = await list(`&endReason=caller-hangup&cursor=${encodeURIComponent(b1.nextCursor)}`);
    expect(page2.body.data).toHaveLength(2);
    expect(page2.body.data.map((s) => s.id)).not.toContain(b1.data[0]!.id);
  });

  it('refuses an unknown kind or end reason with the one error envelope', async () => {
    for (const q of ['&kind=fax', '&endReason=completed']) {
      const res = await p.request(`/v1/observability/sessions?${q.slice(1)}`, { key: dev.apiKey });
      expect(res.status).toBe(400);
      const e = ((await res.json()) as { error: { type: string; param: string } }).error;
      expect(e.type).toBe('invalid_request_error');
      expect(e.param).toMatch(/kind|endReason/);
    }
  });
});
