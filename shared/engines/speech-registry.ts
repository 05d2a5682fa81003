import type { Config } from '../kernel/config/index.ts';
import { EngineRegistry } from './core/registry.ts';
import { resolveBatchCpus, type CpuChoice } from '../kernel/process/cpu-affinity.ts';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { DEFAULT_PS_STREAM_BIN, LocalLiveSttEngine } from './stt/pocketsphinx-live.ts';
import { LanguageModels } from './stt/lm/language-models.ts';
import { PocketsphinxSttEngine } from './stt/pocketsphinx.ts';
import type { SttEngine } from './stt/types.ts';
import { registerSttVendors } from './stt/vendors/index.ts';
import { LocalTtsEngine } from './tts/local.ts';
import { RHVOICE_NOT_INSTALLED, RhvoiceTtsEngine } from './tts/rhvoice.ts';
import type { TtsEngine } from './tts/types.ts';
import { registerTtsVendors } from './tts/vendors/index.ts';
import { SileroVad } from './vad/silero.ts';
import type { VadEngine } from './vad/types.ts';

export interface SpeechEngines {
  tts: EngineRegistry<TtsEngine>;
  stt: EngineRegistry<SttEngine>;
  vad: VadEngine;
  /**
   * The local STT of calls (`default` on the direct and phone paths): the streaming recogniser, or, when its
   * worker binary is not there (set-up not run), the batch engine per utterance; `liveSttFallback` then says why.
   */
  liveStt: SttEngine;
  liveSttFallback: string | null;
  /** The per-agent language models of the process (the default STT's biasing), kept under SPEECH_LM_DIR. */
  languageModels: LanguageModels;
  /** Where the local TTS's batch workers run (SPEECH_LOCAL_BATCH_CPUS), and why: logged once at boot. */
  batchCpus: CpuChoice;
}

/**
 * The speech engines of a process (part of engines.ts's container): the local `default` engines (flite + espeak-ng
 * TTS, pocketsphinx STT, Silero VAD; RHVoice TTS where installed) and the brand-named vendor adapters. Vendor keys
 * are not needed to register: they are resolved per request and passed as `apiKey`.
 */
export function buildSpeechEngines(config: Config): SpeechEngines {
  const tts = new EngineRegistry<TtsEngine>('tts');
  const batchCpus = resolveBatchCpus(config.SPEECH_LOCAL_BATCH_CPUS);
  // flite and espeak-ng paths (SPEECH_FLITE_BIN, SPEECH_ESPEAK_BIN) apply through the configured tools.
  tts.register(
    'default',
    new LocalTtsEngine({
      fliteServerBin: config.SPEECH_FLITE_SERVER_BIN || undefined,
      fliteWorkers: config.SPEECH_FLITE_WORKERS,
      cpuDeadline: { baseMs: config.SPEECH_FLITE_CPU_BASE_MS, perCharMs: config.SPEECH_FLITE_CPU_MS_PER_CHAR },
      batchCpus: batchCpus.pinning,
    }),
  );
  // The opt-in RHVoice engine is offered only where the set-up installed it (RHVOICE=1); elsewhere naming it is a
  // 400 that says how to enable it.
  const rhvoice = {
    serverBin: config.SPEECH_RHVOICE_SERVER_BIN || undefined,
    dataDir: config.SPEECH_RHVOICE_DATA_DIR,
  };
  if (RhvoiceTtsEngine.installed(rhvoice)) tts.register('rhvoice', new RhvoiceTtsEngine(rhvoice));
  else tts.unavailable('rhvoice', RHVOICE_NOT_INSTALLED);
  registerTtsVendors(tts, config);
  const stt = new EngineRegistry<SttEngine>('stt');
  const batch = new PocketsphinxSttEngine({ modelDir: config.SPEECH_POCKETSPHINX_MODEL_DIR });
  stt.register('default', batch);
  registerSttVendors(stt, config);
  const bin = config.SPEECH_PS_STREAM_BIN || DEFAULT_PS_STREAM_BIN;
  const streaming = existsSync(bin);
  const liveStt = streaming
    ? new LocalLiveSttEngine(batch, {
        bin,
        modelDir: config.SPEECH_POCKETSPHINX_MODEL_DIR,
        // One worker per core across the processes sharing this machine (each worker is one busy thread at most).
        workers: config.SPEECH_LIVE_STT_WORKERS || Math.max(1, Math.floor(availableParallelism() / config.PROCESSES)),
        hangoverMs: config.SPEECH_LIVE_STT_HANGOVER_MS,
      })
    : batch;
  const liveSttFallback = streaming
    ? null
    : `${bin} is missing (run scripts/setup.sh): calls on the local STT are transcribed per utterance by batch pocketsphinx, 1-4 s after the caller stops`;
  const languageModels = new LanguageModels({
    dir: config.SPEECH_LM_DIR,
    modelDir: config.SPEECH_POCKETSPHINX_MODEL_DIR,
    maxChars: config.SPEECH_LM_MAX_CHARS,
    buildTimeoutMs: config.SPEECH_LM_BUILD_TIMEOUT_MS,
    backgroundDir: config.SPEECH_LM_BACKGROUND_DIR || config.SPEECH_LM_DIR,
  });
  return { tts, stt, vad: new SileroVad(), liveStt, liveSttFallback, languageModels, batchCpus };
}
