import type { AgentTestPlatform, Config } from '../../kernel/config/index.ts';
import type { Scenario } from '../../contracts/agent-tests.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import { getAgent } from '../agents/db.ts';
import { getAgentVersion } from '../agents/versions.ts';
import { startOfflineVendors, type OfflineVendors } from './offline-vendors.ts';
import { scenarioPlatform, testPlatformConfig } from './platform-config.ts';

/** A started private api + realtime pair. */
interface Started {
  url: string;
  stop(): Promise<void>;
}

/** A private platform of one kind, with the vendors it is pointed at: where a scenario's call goes. */
export interface ScenarioPlatform {
  url: string;
  vendors: OfflineVendors;
  kind: AgentTestPlatform;
}

/**
 * One slot of a run (the CLI has one; a REST run AGENT_TESTS_MAX_PARALLEL): its own simulated STT and scripted LLM,
 * and at most one private platform at a time, of the kind the current scenario needs. A scenario of another kind
 * (scripted replies, then the agent's own LLM) stops it and starts one of that kind, about a second: a run of one
 * kind starts one platform per slot, as before.
 */
export class PlatformSlot {
  private current: (Started & { kind: AgentTestPlatform }) | null = null;

  private constructor(
    private readonly vendors: OfflineVendors,
    private readonly start: (config: Config) => Promise<Started>,
    private readonly base: Config,
    private readonly s3: string | null,
  ) {}

  static async open(
    start: (config: Config) => Promise<Started>,
    base: Config,
    embeddedS3Endpoint: string | null,
  ): Promise<PlatformSlot> {
    return new PlatformSlot(await startOfflineVendors(), start, base, embeddedS3Endpoint);
  }

  /** The slot's platform of this kind, started (or restarted from another kind) when needed. */
  async platform(kind: AgentTestPlatform): Promise<ScenarioPlatform> {
    if (this.current?.kind !== kind) {
      const old = this.current;
      this.current = null;
      await old?.stop();
      const started = await this.start(testPlatformConfig(this.base, this.vendors, this.s3, kind));
      this.current = { url: started.url, stop: () => started.stop(), kind };
    }
    return { url: this.current.url, vendors: this.vendors, kind };
  }

  /** The platform a scenario needs, for an agent on this LLM provider (platform-config.ts: scenarioPlatform). */
  forScenario(scenario: Scenario, llmProvider: string): Promise<ScenarioPlatform> {
    return this.platform(scenarioPlatform(scenario, llmProvider));
  }

  async close(): Promise<void> {
    try {
      await this.current?.stop();
    } finally {
      this.current = null;
      await this.vendors.close();
    }
  }
}

/**
 * The LLM provider of the agent a run calls (the version named, else the agent as stored): it decides whether a
 * scenario without `llm.replies` runs offline (the local reply engine) or on a vendor (metered). Null when the
 * agent is gone.
 */
export async function agentLlmProvider(
  db: Queryable,
  developerId: string,
  agentId: string,
  version: number | null,
): Promise<string | null> {
  const agent = await getAgent(db, developerId, agentId);
  if (!agent) return null;
  if (version === null) return agent.llm_provider;
  const v = await getAgentVersion(db, developerId, agentId, version);
  return v?.config.llm_provider ?? agent.llm_provider;
}
