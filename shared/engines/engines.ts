import type { Config } from '../kernel/config/index.ts';
import { ConfigError } from '../kernel/config/index.ts';
import type { EngineRegistry } from './core/registry.ts';
import { buildEmbeddingRegistry } from './embeddings/registry.ts';
import type { EmbeddingEngine } from './embeddings/types.ts';
import { buildLlmRegistry } from './llm/registry.ts';
import { DeepLTranslateEngine } from './translate/deepl.ts';
import type { LlmEngine } from './llm/types.ts';
import { buildSpeechEngines, type SpeechEngines } from './speech-registry.ts';
import { buildVideoEngines, type VideoEngines } from './video-registry.ts';

/**
 * The engines of a process, one registry per capability, built once from its config when the process starts
 * (`createInfra` holds them as `infra.engines`) and handed to every role and domain from there. Engines take
 * plain inputs: nothing here knows a process's connections, and nothing is memoised behind a caller's object.
 * (The local video analysis engine transcribes with a function the video job hands it, so no engine needs a domain.)
 */
export interface Engines extends SpeechEngines {
  llm: EngineRegistry<LlmEngine>;
  embeddings: EngineRegistry<EmbeddingEngine>;
  /** Avatar, lip-sync, text-to-video and analysis registries, and the configured model servers. */
  video: VideoEngines;
  /** DeepL, the keyed translator of dubbing (the local Apertium pairs are read from the machine on use). */
  deepl: DeepLTranslateEngine;
}

/**
 * Builds every registry from config. A bad vendor configuration (a malformed model-server list, an unusable base
 * URL) stops the process with a message naming it instead of failing a user's call later; models still load on
 * first use, so this is cheap.
 */
export function buildEngines(config: Config): Engines {
  const step = <T>(what: string, build: () => T): T => {
    try {
      return build();
    } catch (e) {
      throw new ConfigError(`Invalid engine configuration (${what}): ${(e as Error).message}`);
    }
  };
  return {
    ...step('speech engines', () => buildSpeechEngines(config)),
    embeddings: step('embedding engines', () => buildEmbeddingRegistry(config)),
    llm: step('LLM engines', () => buildLlmRegistry(config)),
    video: step('video engines', () => buildVideoEngines(config)),
    deepl: new DeepLTranslateEngine({ baseUrl: config.vendors.baseUrls.deepl }),
  };
}

/** The providers of each capability. */
export type EngineSummary = Record<
  'tts' | 'stt' | 'embeddings' | 'llm' | 'avatar' | 'lipsync' | 'generate' | 'analysis',
  string[]
>;

/** Which providers each capability has in this process, for the start-up log. */
export function engineSummary(engines: Engines): EngineSummary {
  const { tts, stt, embeddings, llm, video } = engines;
  return {
    tts: tts.providers(),
    stt: stt.providers(),
    embeddings: embeddings.providers(),
    llm: llm.providers(),
    avatar: video.avatar.providers(),
    lipsync: video.lipsync.providers(),
    generate: video.generate.providers(),
    analysis: video.analysis.providers(),
  };
}
