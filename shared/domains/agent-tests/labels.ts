import type { AgentTestPlatform } from '../../kernel/config/index.ts';
import type { Scenario } from '../../contracts/agent-tests.ts';
import { LLM_PROVIDER_LABELS } from '../../contracts/providers.ts';
import type { SessionDetail } from '../../contracts/sessions.ts';
import { SCRIPTED_LLM_LABEL, SIMULATED_STT_LABEL } from './offline-vendors.ts';

type Engines = NonNullable<SessionDetail['engines']>;

/** The local default STT of a direct session: a real recogniser, on this machine. */
const LOCAL_STT_LABEL = 'pocketsphinx (local, offline: it hears the caller’s audio)';

/**
 * The labels of a scenario's STT and LLM in its result: what answered, honestly. Read from the platform's record of
 * the call once there is one (the engines its trace stored), else what the platform's kind implies.
 */
export function engineLabels(scenario: Scenario, kind: AgentTestPlatform) {
  const wer = scenario.impairments?.sttWordErrorRate;
  return {
    stt(engines: Engines | null): string {
      // A phone call's STT is the simulated one; a direct session's is the agent's (the local engine by default, any
      // vendor's answered by the simulated one on a test platform).
      if (engines?.stt === 'default')
        return wer
          ? `${LOCAL_STT_LABEL}; sttWordErrorRate not applied (a real recogniser errs on its own)`
          : LOCAL_STT_LABEL;
      if (!engines && scenario.transport === 'websocket')
        return 'the agent’s direct-session STT (the call did not start)';
      return wer ? `${SIMULATED_STT_LABEL}, ${Math.round(wer * 100)} % word errors` : SIMULATED_STT_LABEL;
    },
    llm(engines: Engines | null): string {
      if (kind === 'scripted') return SCRIPTED_LLM_LABEL;
      if (kind === 'local') return `the agent’s own: ${engines?.llmLabel ?? LLM_PROVIDER_LABELS.local}; offline, free`;
      const vendor = engines ? `${engines.llmLabel} (${engines.llm})` : 'its vendor';
      return `the agent’s own LLM: ${vendor}, a real vendor at real cost, metered as test traffic`;
    },
  };
}
