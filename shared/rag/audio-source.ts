import type { EngineRegistry } from '../engines/core/registry.ts';
import type { SttEngine, TranscriptionResult } from '../engines/stt/types.ts';
import { ApiError } from '../errors/api-error.ts';
import { safeFetchBuffer } from '../net/safe-fetch.ts';
import type { Infra } from '../runtime/infra.ts';

/** Contract limit of transcription uploads, applied to fetched audio too. */
const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
/** The local recogniser wants 16 kHz wideband audio. */
const SAMPLE_RATE = 16_000;

interface AudioModule {
  decodeToPcm(
    input: Buffer,
    opts: { sampleRate: number; signal?: AbortSignal; param?: string },
  ): Promise<{ pcm: Buffer; sampleRate: number; duration: number }>;
}
interface SpeechRegistryModule {
  speechEngines(infra: Infra): { stt: EngineRegistry<SttEngine> };
}

// The speech area owns decoding and the STT registry; loaded on first audio ingest only.
const AUDIO_MODULE = '../audio/index.ts';
const SPEECH_REGISTRY_MODULE = '../engines/speech-registry.ts';

async function load<T>(specifier: string): Promise<T> {
  try {
    return (await import(specifier)) as T;
  } catch {
    throw new ApiError('feature_not_configured', {
      detail: 'Audio ingest needs the speech engines, which are not installed here.',
    });
  }
}

/** Fetches audio SSRF-safely, decodes it to 16 kHz mono PCM and transcribes it with the local STT engine. */
export async function transcribeAudioUrl(
  infra: Infra,
  url: string,
  signal?: AbortSignal,
): Promise<TranscriptionResult> {
  const { buf } = await safeFetchBuffer(url, {
    policy: infra.addressPolicy,
    maxBytes: Math.min(infra.config.OUTBOUND_MAX_BYTES, MAX_AUDIO_BYTES),
    timeoutMs: infra.config.OUTBOUND_TIMEOUT_MS,
    signal,
    param: 'sourceUrl',
  });
  const audio = await load<AudioModule>(AUDIO_MODULE);
  const decoded = await audio.decodeToPcm(buf, { sampleRate: SAMPLE_RATE, signal, param: 'sourceUrl' });
  const speech = await load<SpeechRegistryModule>(SPEECH_REGISTRY_MODULE);
  const stt = speech.speechEngines(infra).stt.get('default');
  return stt.transcribe({
    pcm: decoded.pcm,
    sampleRate: decoded.sampleRate,
    language: 'en',
    mode: 'accurate',
    timestamps: 'segment',
    diarize: false,
    signal,
  });
}
