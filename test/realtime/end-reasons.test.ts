import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expirePendingSessions } from '../../shared/domains/realtime/sessions.ts';
import { SESSION_END_REASONS } from '../../shared/contracts/end-reasons.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Typed end reasons (docs/realtime.md, "End reasons"): the database admits exactly the contract's list, rows from
 * before typed reasons were moved to it (the migration, run again here over old-style rows), and the OpenAPI
 * document names the values. That every producer's value is in the list is the typecheck's part: the end-call
 * frame, `CallSession.stop`, the trace store and the owner's writes all take `SessionEndReason`.
 */
let p: TestPlatform;
let developerId: string;
let key: string;
const MIGRATION = readFileSync(
  new URL('../../shared/kernel/db/migrations/0975_rt_session_end_reasons.sql', import.meta.url),
  'utf8',
);

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  ({ developerId, apiKey: key } = await p.developer('pro'));
}, 60_000);
afterAll(() => p?.close());

let seq = 0;
async function oldRow(
  endReason: string | null,
  o: { status?: string; assistantSaid?: string; userSaid?: string; agent?: { id: string; version: number } } = {},
) {
  const id = `ses_legacy${++seq}`;
  await p.infra.db.query(
    `insert into rt_sessions (id, developer_id, agent_id, agent_version, channel, direction, status, end_reason,
                              started_at, ended_at)
     values ($1, $2, $3, $4, 'twilio', 'outbound', $5, $6, now(), now())`,
    [id, developerId, o.agent?.id ?? 'agt_gone', o.agent?.version ?? null, o.status ?? 'completed', endReason],
  );
  let idx = 0;
  for (const [speaker, text] of [
    ['user', o.userSaid],
    ['assistant', o.assistantSaid],
  ] as const)
    if (text !== undefined)
      await p.infra.db.query('insert into rt_turns (session_id, idx, speaker, text) values ($1, $2, $3, $4)', [
        id,
        idx++,
        speaker,
        text,
      ]);
  return id;
}

const row = async (id: string) =>
  (
    await p.infra.db.query<{ end_reason: string | null; error: string | null }>(
      'select end_reason, error from rt_sessions where id = $1',
      [id],
    )
  ).rows[0]!;

describe('rt_sessions.end_reason', () => {
  it("admits exactly the contract's SessionEndReason values", async () => {
    const { rows } = await p.infra.db.query<{ def: string }>(
      `select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'rt_sessions_end_reason_check'`,
    );
    expect(rows).toHaveLength(1);
    const admitted = [...rows[0]!.def.matchAll(/'([^']+)'::text/g)].map((m) => m[1]);
    expect(new Set(admitted)).toEqual(new Set(SESSION_END_REASONS));
    await expect(oldRow('caller_hangup')).rejects.toThrow(/rt_sessions_end_reason_check/);
  });

  it('the migration moves old rows to typed reasons, deciding voicemail from what the call recorded', async () => {
    // Two agents as they were when their calls ran (version 1), both since changed the other way.
    const agent = async (action: 'leave_message' | 'hangup', now: 'leave_message' | 'hangup') => {
      const voicemail = (a: string) => (a === 'hangup' ? { action: a } : { action: a, message: 'Please call back.' });
      const r = await p.request('/v1/agents', {
        method: 'POST',
        key,
        json: { name: `vm ${action}`, systemPrompt: 'Be brief.', voicemail: voicemail(action) },
      });
      expect(r.status).toBe(201);
      const { id } = (await r.json()) as { id: string };
      const put = await p.request(`/v1/agents/${id}`, { method: 'PUT', key, json: { voicemail: voicemail(now) } });
      expect(put.status).toBe(200);
      return { id, version: 1 };
    };
    const leaver = await agent('leave_message', 'hangup');
    const hanger = await agent('hangup', 'leave_message');
    await p.infra.db.query('alter table rt_sessions drop constraint rt_sessions_end_reason_check');
    const ids = {
      // No turns recorded (a lost trace): the agent version the call ran decides, not the agent as it is now.
      leftByVersion: await oldRow('voicemail', { agent: leaver }),
      hungUpByVersion: await oldRow('voicemail', { agent: hanger }),
      left: await oldRow('voicemail', { assistantSaid: 'Hi Dana, this is the clinic.' }),
      hungUp: await oldRow('voicemail', { userSaid: 'Please leave a message.' }),
      hangup: await oldRow('caller_hangup'),
      stop: await oldRow('client_stop'),
      duration: await oldRow('max_duration'),
      credits: await oldRow('max-credits'),
      lost: await oldRow('worker_lost', { status: 'failed' }),
      start: await oldRow('start_failed', { status: 'failed' }),
      closed: await oldRow('socket_closed'),
      shutdown: await oldRow('server_shutdown'),
      protocol: await oldRow('protocol_error:invalid_message'),
      odd: await oldRow('something_else'),
      none: await oldRow(null, { status: 'active' }),
    };
    await p.infra.db.query(MIGRATION);
    const got = Object.fromEntries(
      await Promise.all(Object.entries(ids).map(async ([k, id]) => [k, await row(id)] as const)),
    );
    expect(got).toMatchObject({
      leftByVersion: { end_reason: 'voicemail-left' },
      hungUpByVersion: { end_reason: 'voicemail-hung-up' },
      left: { end_reason: 'voicemail-left', error: null },
      hungUp: { end_reason: 'voicemail-hung-up' },
      hangup: { end_reason: 'caller-hangup' },
      stop: { end_reason: 'caller-hangup' },
      duration: { end_reason: 'max-duration' },
      credits: { end_reason: 'max-credits' },
      lost: { end_reason: 'worker-lost' },
      start: { end_reason: 'start-failed' },
      closed: { end_reason: 'socket-closed' },
      shutdown: { end_reason: 'server-shutdown' },
      protocol: { end_reason: 'protocol-error', error: 'ended with protocol_error:invalid_message' },
      odd: { end_reason: 'error', error: 'ended with something_else' },
      none: { end_reason: null },
    });
  });

  it('a pending session whose token expired unclaimed ends stream-never-connected', async () => {
    const id = `ses_expiring${++seq}`;
    await p.infra.db.query(
      `insert into rt_sessions (id, developer_id, agent_id, channel, status, expires_at)
       values ($1, $2, 'agt_gone', 'twilio', 'pending', now() - interval '1 second')`,
      [id, developerId],
    );
    expect(await expirePendingSessions(p.infra.db)).toBeGreaterThanOrEqual(1);
    expect(await row(id)).toMatchObject({ end_reason: 'stream-never-connected' });
  });
});

describe('the OpenAPI document', () => {
  it('lists the end reasons on sessions and campaign attempts', async () => {
    const doc = JSON.stringify(await (await p.request('/openapi.json')).json());
    const enumText = JSON.stringify([...SESSION_END_REASONS]);
    // The session list, one session, and a campaign's attempts each carry the enum.
    expect(doc.split(enumText).length - 1).toBeGreaterThanOrEqual(3);
  });
});
