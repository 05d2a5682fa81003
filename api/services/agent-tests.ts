import {
  parseScenarioFile,
  ScenarioFileError,
  type CreateTestRunBody,
  type Scenario,
  type TestRun,
  type TestRunDetail,
} from '../../shared/contracts/agent-tests.ts';
import { AUDIO_KEY_NOT_FOUND, ownObjectExists } from '../../shared/domains/agent-tests/audio-key.ts';
import { assertRunCallBudget, insertWithinInFlightLimit } from '../../shared/domains/agent-tests/limits.ts';
import { runMode } from '../../shared/domains/agent-tests/platform-config.ts';
import { precheckUrl } from '../../shared/domains/video/url-check.ts';
import { agentLlmProvider } from '../../shared/domains/agent-tests/platform-slot.ts';
import { getTestRun, insertTestRun, listTestRuns } from '../../shared/domains/agent-tests/store.ts';
import { toTestRun, toTestRunDetail } from '../../shared/domains/agent-tests/views.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { newId } from '../../shared/kernel/ids.ts';
import { decodeCursor, toPage, type Page, type PageQuery } from '../../shared/kernel/pagination.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { requireAgent } from './agents.ts';

/** The scenarios of a request: objects as given, or a scenario file's text (YAML or JSON) parsed here. */
function scenariosOf(body: CreateTestRunBody): Scenario[] {
  let scenarios: Scenario[];
  if (typeof body.scenarios === 'string') {
    try {
      scenarios = parseScenarioFile(body.scenarios, 'scenarios');
    } catch (e) {
      if (e instanceof ScenarioFileError) throw new ApiError('validation_failed', { detail: e.message }, 'scenarios');
      throw e;
    }
  } else scenarios = body.scenarios;
  if (scenarios.length > 100)
    throw new ApiError('validation_failed', { detail: 'at most 100 scenarios in one run' }, 'scenarios');
  // A file path means a file on the CLI's machine: the platform reads URLs and the developer's own objects only.
  scenarios.forEach((s, i) =>
    s.turns.forEach((t, k) => {
      if (t.audio?.file)
        throw new ApiError(
          'validation_failed',
          { detail: `scenarios[${i}].turns[${k}].audio.file: give audio.url or audio.key over the API` },
          `scenarios[${i}].turns[${k}].audio.file`,
        );
    }),
  );
  return scenarios;
}

/**
 * Every `audio.key` names an object of the developer's own, checked before the run is stored so a typo is a 400
 * rather than a failed scenario minutes later. Another tenant's key and a missing one get the same answer
 * (AUDIO_KEY_NOT_FOUND); the run checks again when it reads the audio.
 */
async function requireOwnAudioKeys(infra: Infra, developerId: string, scenarios: Scenario[]): Promise<void> {
  const checked = new Map<string, boolean>();
  for (const [i, s] of scenarios.entries()) {
    for (const [k, t] of s.turns.entries()) {
      const key = t.audio?.key;
      if (key === undefined) continue;
      if (!checked.has(key)) checked.set(key, await ownObjectExists(infra.storage, developerId, key));
      if (!checked.get(key)) {
        const at = `scenarios[${i}].turns[${k}].audio.key`;
        throw new ApiError('validation_failed', { detail: `${at}: ${AUDIO_KEY_NOT_FOUND}` }, at);
      }
    }
  }
}

/**
 * Stores the run and queues it (job id = run id) on the test pool (queue cpu-tests); its calls start on a CPU
 * worker. Refused with 400 when its call budget is above AGENT_TESTS_MAX_CALL_MINUTES and with 429 when the
 * developer already has their tier's number of runs and replays in flight (limits.ts).
 */
export async function createTestRun(
  infra: Infra,
  developerId: string,
  agentId: string,
  body: CreateTestRunBody,
): Promise<TestRun> {
  const agent = await requireAgent(infra.db, developerId, agentId);
  const scenarios = scenariosOf(body);
  await requireOwnAudioKeys(infra, developerId, scenarios);
  // The delivery's own address policy, now: a private or non-http(s) URL is a 400, not a failed delivery later.
  if (body.webhookUrl !== undefined)
    await precheckUrl(body.webhookUrl, infra.addressPolicy, 'webhookUrl', { allowUnresolved: true });
  assertRunCallBudget(infra.config, scenarios);
  const version = body.version ?? null;
  // Metered when a scenario without llm.replies meets a vendor LLM (read again when the run starts).
  const provider = (await agentLlmProvider(infra.db, developerId, agentId, version)) ?? agent.llm_provider;
  const row = await insertWithinInFlightLimit(infra.db, infra.config, developerId, (tx) =>
    insertTestRun(tx, {
      id: newId('testRun'),
      developerId,
      agentId,
      version,
      scenarios,
      webhookUrl: body.webhookUrl ?? null,
      mode: runMode(scenarios, provider),
    }),
  );
  // Postgres holds the run; a lost enqueue leaves it queued, and the next create or a retry of this one re-queues.
  await infra.queues.enqueue('agent-tests.run', { runId: row.id }, { jobId: row.id });
  return toTestRun(row);
}

export async function listTestRunPage(
  infra: Infra,
  developerId: string,
  agentId: string,
  q: PageQuery,
): Promise<Page<TestRun>> {
  await requireAgent(infra.db, developerId, agentId);
  const rows = await listTestRuns(infra.db, developerId, agentId, { after: decodeCursor(q.cursor), limit: q.limit });
  return toPage(rows, q.limit, toTestRun);
}

export async function getTestRunDetail(infra: Infra, developerId: string, runId: string): Promise<TestRunDetail> {
  const row = await getTestRun(infra.db, developerId, runId);
  if (!row) throw ApiError.notFound('agent test run', runId);
  return toTestRunDetail(row);
}
