import type { AnalysisSettings } from '../../../contracts/call-analysis.ts';
import type { Logger } from '../../../kernel/observability/logger.ts';
import type { Infra } from '../../../platform/infra.ts';

/** The job id of a session's analysis: one per call, however often it is asked for. */
export const analysisJobId = (sessionId: string) => `call-analyze-${sessionId}`;

/** Whether a call has anything to analyse or report: the agent asked for analysis, or a message was taken. */
export function wantsAnalysis(analysis: AnalysisSettings | null | undefined, tookMessage: boolean): boolean {
  return Boolean(analysis) || tookMessage;
}

/**
 * Asks for a call's post-call analysis (the `call.analyze` CPU job) once it has ended and its trace is written.
 * Never throws: a call that ended must not fail for its analysis; the failure is logged.
 */
export async function requestCallAnalysis(
  infra: Infra,
  sessionId: string,
  why: { analysis: AnalysisSettings | null | undefined; tookMessage: boolean },
  log: Logger,
): Promise<void> {
  if (!wantsAnalysis(why.analysis, why.tookMessage)) return;
  // An agent test's or a replay's call (a private platform of simulated vendors) is not analysed: the analysis would
  // run on the agent's real LLM, a vendor cost the offline test never asked for.
  if (infra.config.agentTestPlatform) return;
  await infra.queues
    .enqueue('call.analyze', { sessionId }, { jobId: analysisJobId(sessionId) })
    .catch((e: Error) => log.error({ sessionId, err: e.message }, 'call analysis not enqueued'));
}
