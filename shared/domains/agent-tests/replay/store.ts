import type { ScriptedLlm } from '../../../contracts/agent-tests.ts';
import type { CallReplay, ReplaySummary, ReplayTurn, ReplayTurnView } from '../../../contracts/call-replay.ts';
import { ifDate, ifSet } from '../../../contracts/absent.ts';
import type { Queryable } from '../../../kernel/db/pool.ts';
import { labelSessionKind } from '../../realtime/sessions.ts';

/** Every statement on call_replays (migration 0902). */
export interface CallReplayRow {
  id: string;
  developer_id: string;
  call_id: string;
  session_id: string;
  agent_id: string;
  agent_version_then: number | null;
  agent_version_now: number;
  llm_replies: ScriptedLlm['replies'] | null;
  /** The replay call's template variables (`{{name}}`), null: none (migration 0985). */
  variables: Record<string, string | number | boolean> | null;
  status: CallReplay['status'];
  turns_done: number;
  turns_total: number;
  stt: string | null;
  llm: string | null;
  replay_session_id: string | null;
  turns: ReplayTurn[];
  summary: ReplaySummary | null;
  error: string | null;
  created_at: Date;
  finished_at: Date | null;
}

export async function insertCallReplay(
  db: Queryable,
  r: Pick<
    CallReplayRow,
    | 'id'
    | 'developer_id'
    | 'call_id'
    | 'session_id'
    | 'agent_id'
    | 'agent_version_then'
    | 'agent_version_now'
    | 'llm_replies'
    | 'variables'
  >,
): Promise<CallReplayRow> {
  const { rows } = await db.query<CallReplayRow>(
    `insert into call_replays (id, developer_id, call_id, session_id, agent_id, agent_version_then, agent_version_now,
       llm_replies, variables)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning *`,
    [
      r.id,
      r.developer_id,
      r.call_id,
      r.session_id,
      r.agent_id,
      r.agent_version_then,
      r.agent_version_now,
      r.llm_replies ? JSON.stringify(r.llm_replies) : null,
      r.variables ? JSON.stringify(r.variables) : null,
    ],
  );
  return rows[0]!;
}

/** One developer's replay; another developer's id reads as missing. */
export async function getCallReplay(db: Queryable, developerId: string, id: string): Promise<CallReplayRow | null> {
  const { rows } = await db.query<CallReplayRow>('select * from call_replays where developer_id = $1 and id = $2', [
    developerId,
    id,
  ]);
  return rows[0] ?? null;
}

/** A call's replays, newest first (ids sort by time); `afterId` is the last one of the previous page. */
export async function listCallReplays(
  db: Queryable,
  developerId: string,
  sessionId: string,
  limit: number,
  afterId: string | null,
): Promise<CallReplayRow[]> {
  const { rows } = await db.query<CallReplayRow>(
    `select * from call_replays where developer_id = $1 and session_id = $2 and ($3::text is null or id < $3)
      order by id desc limit $4`,
    [developerId, sessionId, afterId, limit],
  );
  return rows;
}

/**
 * SQL expression: how many replays of the developer `developerId` (an SQL expression) are open (queued or
 * running), for the in-flight limit counted in the creating transaction (../limits.ts).
 */
export function openCallReplayCountSql(developerId: string): string {
  return `(select count(*) from call_replays where developer_id = ${developerId} and status in ('queued', 'running'))`;
}

/** Replays still queued or running after `olderThanMs` (the reconciler checks their queue entries). */
export async function openCallReplays(
  db: Queryable,
  olderThanMs: number,
): Promise<{ id: string; status: 'queued' | 'running' }[]> {
  const { rows } = await db.query<{ id: string; status: 'queued' | 'running' }>(
    `select id, status from call_replays
      where status in ('queued', 'running') and created_at < now() - make_interval(secs => $1::double precision / 1000)
      order by id limit 100`,
    [olderThanMs],
  );
  return rows;
}

/** Fails a replay that is still open (a finished one keeps its result); false when it was not open. */
export async function failOpenCallReplay(db: Queryable, id: string, error: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `update call_replays set status = 'failed', error = $2, finished_at = now()
      where id = $1 and status in ('queued', 'running')`,
    [id, error],
  );
  return (rowCount ?? 0) > 0;
}

/** The job's read: by id alone (the job carries no developer). */
export async function loadCallReplay(db: Queryable, id: string): Promise<CallReplayRow | null> {
  const { rows } = await db.query<CallReplayRow>('select * from call_replays where id = $1', [id]);
  return rows[0] ?? null;
}

/** Marks the replay running with what it will play and with which engines; false when it is not queued any more. */
export async function startCallReplay(
  db: Queryable,
  id: string,
  s: { turnsTotal: number; stt: string; llm: string },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update call_replays set status = 'running', turns_total = $2, stt = $3, llm = $4
      where id = $1 and status = 'queued'`,
    [id, s.turnsTotal, s.stt, s.llm],
  );
  return (rowCount ?? 0) > 0;
}

export async function callReplayProgress(db: Queryable, id: string, turnsDone: number, sessionId?: string) {
  await db.query(
    `update call_replays set turns_done = $2, replay_session_id = coalesce($3, replay_session_id)
      where id = $1 and status = 'running'`,
    [id, turnsDone, sessionId ?? null],
  );
  if (sessionId) await labelSessionKind(db, sessionId, 'replay');
}

export async function finishCallReplay(
  db: Queryable,
  id: string,
  r: {
    status: 'completed' | 'failed';
    turns?: ReplayTurn[];
    summary?: ReplaySummary | null;
    replaySessionId?: string | null;
    error?: string | null;
    /** What actually transcribed and answered, once the replay session says. */
    stt?: string | null;
    llm?: string | null;
  },
): Promise<void> {
  await db.query(
    `update call_replays set status = $2, turns = coalesce($3::jsonb, turns), summary = $4::jsonb,
       replay_session_id = coalesce($5, replay_session_id), error = $6, stt = coalesce($7, stt),
       llm = coalesce($8, llm), finished_at = now()
      where id = $1`,
    [
      id,
      r.status,
      r.turns ? JSON.stringify(r.turns) : null,
      r.summary ? JSON.stringify(r.summary) : null,
      r.replaySessionId ?? null,
      r.error ?? null,
      r.stt ?? null,
      r.llm ?? null,
    ],
  );
  if (r.replaySessionId) await labelSessionKind(db, r.replaySessionId, 'replay');
}

export function toCallReplay(r: CallReplayRow): CallReplay {
  return {
    id: r.id,
    callId: r.call_id,
    sessionId: r.session_id,
    agentId: r.agent_id,
    agentVersion: thenNow(r.agent_version_then, r.agent_version_now),
    status: r.status,
    progress: { turnsDone: r.turns_done, turnsTotal: r.turns_total },
    ...ifSet('stt', r.stt),
    ...ifSet('llm', r.llm),
    ...ifSet('replaySessionId', r.replay_session_id),
    turns: r.turns.map(toTurnView),
    ...(r.summary
      ? { summary: { ...r.summary, avgLatencyMs: thenNow(r.summary.avgLatencyMs.then, r.summary.avgLatencyMs.now) } }
      : {}),
    ...ifSet('error', r.error),
    createdAt: r.created_at.toISOString(),
    ...ifDate('finishedAt', r.finished_at),
  };
}

/** `{then, now}` with each side absent when unset. */
function thenNow<T>(then: T | null | undefined, now: T | null | undefined): { then?: T; now?: T } {
  return { ...ifSet('then', then), ...ifSet('now', now) };
}

function toTurnView(t: ReplayTurn): ReplayTurnView {
  const { then: callerThen, now: callerNow } = t.caller;
  const { then: replyThen, now: replyNow, changed } = t.reply;
  const { skipped, ...rest } = t;
  return {
    ...rest,
    caller: thenNow(callerThen, callerNow),
    reply: { ...thenNow(replyThen, replyNow), changed },
    latencyMs: thenNow(t.latencyMs.then, t.latencyMs.now),
    ...ifSet('skipped', skipped),
  };
}
