import { ConfigError } from '../kernel/config/index.ts';
import type { Infra } from '../platform/infra.ts';
import { videoEngines } from '../domains/video/engines.ts';
import { embeddingEngines } from '../engines/embeddings/registry.ts';
import { llmEngines } from '../engines/llm/registry.ts';
import { speechEngines } from '../engines/speech-registry.ts';

/** Which providers each capability has in this process, for the start-up log. */
export type EngineSummary = Record<
  'tts' | 'stt' | 'embeddings' | 'llm' | 'avatar' | 'lipsync' | 'generate' | 'analysis',
  string[]
>;

/**
 * Builds every engine registry of a process from its config, once, at role start (the per-Infra memo then serves
 * requests), so a bad vendor configuration (a malformed model-server list, an unusable base URL) stops the
 * process with a message naming it instead of failing a user's call later. Models still load on first use.
 */
export function buildEngines(infra: Infra): EngineSummary {
  const step = <T>(what: string, build: () => T): T => {
    try {
      return build();
    } catch (e) {
      throw new ConfigError(`Invalid engine configuration (${what}): ${(e as Error).message}`);
    }
  };
  const speech = step('speech engines', () => speechEngines(infra));
  const video = step('video engines', () => videoEngines(infra));
  const embeddings = step('embedding engines', () => embeddingEngines(infra));
  const llm = step('LLM engines', () => llmEngines(infra));
  return {
    tts: speech.tts.providers(),
    stt: speech.stt.providers(),
    embeddings: embeddings.providers(),
    llm: llm.providers(),
    avatar: video.avatar.providers(),
    lipsync: video.lipsync.providers(),
    generate: video.generate.providers(),
    analysis: video.analysis.providers(),
  };
}
