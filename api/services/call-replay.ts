import { newCallReplay } from '../../shared/domains/agent-tests/replay/request.ts';
import { findCall } from '../../shared/domains/agent-tests/replay/recorded-call.ts';
import { getCallReplay, listCallReplays, toCallReplay } from '../../shared/domains/agent-tests/replay/store.ts';
import { decodeCursor, toPage, type Page } from '../../shared/kernel/pagination.ts';
import type { CallReplay, CallReplayBody } from '../../shared/contracts/call-replay.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import type { Infra } from '../../shared/platform/infra.ts';

/** POST /v1/calls/:callId/replay: the checked replay, queued for the cpu pool (job id = replay id). */
export async function requestReplay(
  infra: Infra,
  developerId: string,
  callId: string,
  body: CallReplayBody,
): Promise<CallReplay> {
  const row = await newCallReplay(infra, developerId, callId, body);
  await infra.queues.enqueue('call-replay.run', { replayId: row.id }, { jobId: row.id });
  return toCallReplay(row);
}

/** GET /v1/calls/:callId/replay/:replayId: the replay with its progress, then its diff. */
export async function getReplay(
  infra: Infra,
  developerId: string,
  callId: string,
  replayId: string,
): Promise<CallReplay> {
  const row = await getCallReplay(infra.db, developerId, replayId);
  if (!row || (row.call_id !== callId && row.session_id !== callId)) throw ApiError.notFound('call replay', replayId);
  return toCallReplay(row);
}

/** GET /v1/calls/:callId/replays: the call's replays, newest first. Another developer's call is 404. */
export async function listReplays(
  infra: Infra,
  developerId: string,
  callId: string,
  q: { limit: number; cursor?: string },
): Promise<Page<CallReplay>> {
  const call = await findCall(infra, developerId, callId);
  if (!call) throw new ApiError('not_found', { resource: 'call', id: callId }, 'callId');
  const rows = await listCallReplays(infra.db, developerId, call.id, q.limit + 1, decodeCursor(q.cursor));
  return toPage(rows, q.limit, toCallReplay);
}
