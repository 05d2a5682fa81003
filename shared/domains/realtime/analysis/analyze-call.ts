import { getAgent } from '../../agents/db.ts';
import { agentAtVersion, getAgentVersion } from '../../agents/versions.ts';
import { enqueueFirstDelivery } from '../../webhooks/delivery.ts';
import { insertWebhookMessage } from '../../webhooks/outbox.ts';
import { LOCAL_REPLY_PROVIDER } from '../../../engines/llm/local-reply.ts';
import { CALL_ANALYZED_EVENT, type CallAnalysis } from '../../../contracts/call-analysis.ts';
import { LLM_PROVIDER_LABELS } from '../../../contracts/providers.ts';
import { withTransaction } from '../../../kernel/db/pool.ts';
import { EngineError } from '../../../kernel/errors/engine-error.ts';
import type { Logger } from '../../../kernel/observability/logger.ts';
import type { Infra } from '../../../platform/infra.ts';
import { resolveProviderKey } from '../../../platform/keys/provider-key.ts';
import type { Reservation } from '../../../platform/metering/types.ts';
import { loadTrace } from '../session-trace.ts';
import { analysisContext, storeSessionAnalysis } from '../sessions.ts';
import { ANALYSIS_MAX_TOKENS, analysisMessages, llmAnalysis, transcriptText } from './llm-analysis.ts';
import { wantsAnalysis } from './request.ts';
import { extractFacts, RULES_LABEL } from './rules.ts';

/** The meter's operation name of a post-call analysis (the credit-weight table, docs/billing.md). */
export const ANALYSIS_OPERATION = 'call.analyze';

/**
 * The post-call analysis of one ended session (`call.analyze`, CPU queue). Idempotent: the result is stored once
 * (a conditional update) and the `call.analyzed` webhook message is written in the same transaction under a
 * unique source, so a retried or repeated job neither analyses nor notifies twice. On the agent's LLM it is
 * metered (`call.analyze`, the session's id as request id); on the local reply engine a rule-based extractor runs,
 * labelled as such. `final` is the job's last attempt: a vendor failure then stores a failed analysis (and sends
 * it) instead of throwing for a retry.
 */
export async function analyzeCall(
  infra: Infra,
  sessionId: string,
  opts: { signal: AbortSignal; log: Logger; final: boolean },
): Promise<CallAnalysis | null> {
  const s = await analysisContext(infra.db, sessionId);
  if (!s || !s.ended_at) return null;
  if (s.analysis) return s.analysis;
  const current = await getAgent(infra.db, s.developer_id, s.agent_id);
  if (!current) return null;
  const version = s.agent_version ? await getAgentVersion(infra.db, s.developer_id, s.agent_id, s.agent_version) : null;
  const agent = version ? agentAtVersion(current, version) : current;
  if (!wantsAnalysis(agent.analysis, Boolean(s.taken_message))) return null;

  const { turns } = await loadTrace(infra.db, sessionId);
  const base = { analyzedAt: new Date().toISOString(), ...(s.taken_message ? { message: s.taken_message } : {}) };
  let analysis: CallAnalysis;
  let hold: Reservation | null = null;
  let usedTokens = 0;
  const settings = agent.analysis;
  if (!settings) {
    // Only a message was taken: nothing was asked of an engine.
    analysis = { status: 'completed', ...base };
  } else if (agent.llm_provider === LOCAL_REPLY_PROVIDER) {
    const notAvailable = (['summary', 'structuredData', 'successCriteria'] as const).filter((k) =>
      k === 'summary' ? settings.summary : settings[k] !== undefined,
    );
    analysis = {
      status: 'completed',
      engine: { kind: 'rules', provider: LOCAL_REPLY_PROVIDER, label: RULES_LABEL },
      extracted: extractFacts(turns.filter((t) => t.speaker === 'user').map((t) => t.text)),
      ...(notAvailable.length ? { notAvailable } : {}),
      ...base,
    };
  } else {
    const engine = infra.engines.llm.get(agent.llm_provider);
    const model = agent.llm_model || engine.defaultModel;
    const label = (LLM_PROVIDER_LABELS as Record<string, string>)[agent.llm_provider] ?? agent.llm_provider;
    const engineInfo = { kind: 'llm' as const, provider: agent.llm_provider, model, label };
    const transcript = transcriptText(turns);
    try {
      const key = (await resolveProviderKey(infra, { engine, developerId: s.developer_id })) ?? {
        key: '',
        source: 'platform' as const,
        billable: true,
      };
      const promptChars = analysisMessages(settings, transcript).reduce((n, m) => n + m.content.length, 0);
      hold = await infra.meter.reserve({
        developerId: s.developer_id,
        category: 'llm',
        units: Math.ceil(promptChars / 4) + ANALYSIS_MAX_TOKENS,
        unit: 'tokens',
        provider: agent.llm_provider,
        billable: key.billable,
        requestId: sessionId,
        operation: ANALYSIS_OPERATION,
      });
      const out = await llmAnalysis(engine, {
        model,
        apiKey: key.key,
        settings,
        transcript,
        signal: opts.signal,
      });
      usedTokens = out.usage.inputTokens + out.usage.outputTokens;
      analysis = { ...out.result, engine: engineInfo, ...base };
    } catch (e) {
      await hold?.refund();
      hold = null;
      const retryable = e instanceof EngineError ? e.retryable : true;
      if (retryable && !opts.final) throw e;
      opts.log.warn({ sessionId, err: (e as Error).message }, 'call analysis failed');
      analysis = { status: 'failed', engine: engineInfo, error: (e as Error).message.slice(0, 500), ...base };
    }
  }

  const outcome = await withTransaction(infra.db, async (tx) => {
    if (!(await storeSessionAnalysis(tx, sessionId, analysis))) return { stored: false, id: null };
    if (!s.webhook_url) return { stored: true, id: null };
    const id = await insertWebhookMessage(tx, {
      developerId: s.developer_id,
      url: s.webhook_url,
      source: `call:${sessionId}:analyzed`,
      type: CALL_ANALYZED_EVENT,
      data: {
        sessionId,
        agentId: s.agent_id,
        ...(s.call_sid ? { callId: s.call_sid } : {}),
        ...(s.end_reason ? { endReason: s.end_reason } : {}),
        analysis,
      },
    });
    return { stored: true, id };
  }).catch(async (e: unknown) => {
    await hold?.refund();
    throw e;
  });
  if (hold) {
    // A second run that lost the race to store gives its hold back; the stored run's tokens are charged.
    if (outcome.stored) await hold.commit(usedTokens);
    else await hold.refund();
  }
  if (outcome.id) await enqueueFirstDelivery(infra, outcome.id);
  return outcome.stored ? analysis : ((await analysisContext(infra.db, sessionId))?.analysis ?? null);
}
