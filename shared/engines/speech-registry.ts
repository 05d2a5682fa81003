import type { Infra } from '../platform/infra.ts';
import { EngineRegistry } from './core/registry.ts';
import { PocketsphinxSttEngine } from './stt/pocketsphinx.ts';
import type { SttEngine } from './stt/types.ts';
import { registerSttVendors } from './stt/vendors/index.ts';
import { LocalTtsEngine } from './tts/local.ts';
import type { TtsEngine } from './tts/types.ts';
import { registerTtsVendors } from './tts/vendors/index.ts';
import { SileroVad } from './vad/silero.ts';
import type { VadEngine } from './vad/types.ts';

export interface SpeechEngines {
  tts: EngineRegistry<TtsEngine>;
  stt: EngineRegistry<SttEngine>;
  vad: VadEngine;
}

const cache = new WeakMap<Infra, SpeechEngines>();

/**
 * The speech engines of a process, built once per Infra from its config: the local `default` engines (flite +
 * espeak-ng TTS, pocketsphinx STT, Silero VAD) and the brand-named vendor adapters. Vendor keys are not needed to
 * register: they are resolved per request and passed as `apiKey`.
 */
export function speechEngines(infra: Pick<Infra, 'config'>): SpeechEngines {
  const key = infra as Infra;
  let engines = cache.get(key);
  if (!engines) {
    engines = buildSpeechEngines(infra.config);
    cache.set(key, engines);
  }
  return engines;
}

export function buildSpeechEngines(config: Infra['config']): SpeechEngines {
  const tts = new EngineRegistry<TtsEngine>('tts');
  // flite and espeak-ng paths (SPEECH_FLITE_BIN, SPEECH_ESPEAK_BIN) apply through the configured tools.
  tts.register(
    'default',
    new LocalTtsEngine({
      fliteServerBin: config.SPEECH_FLITE_SERVER_BIN || undefined,
      fliteWorkers: config.SPEECH_FLITE_WORKERS,
      cpuDeadline: { baseMs: config.SPEECH_FLITE_CPU_BASE_MS, perCharMs: config.SPEECH_FLITE_CPU_MS_PER_CHAR },
    }),
  );
  registerTtsVendors(tts, config);
  const stt = new EngineRegistry<SttEngine>('stt');
  stt.register('default', new PocketsphinxSttEngine({ modelDir: config.SPEECH_POCKETSPHINX_MODEL_DIR }));
  registerSttVendors(stt, config);
  return { tts, stt, vad: new SileroVad() };
}
