import { decodeToPcm } from '../../kernel/audio/index.ts';
import { speechEngines } from '../../engines/speech-registry.ts';
import type { TranscriptionResult } from '../../engines/stt/types.ts';
import { safeFetchBuffer } from '../../kernel/net/safe-fetch.ts';
import type { Infra } from '../../platform/infra.ts';
import { ragEngineError } from './errors.ts';

/** Contract limit of transcription uploads, applied to fetched audio too. */
const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
/** The local recogniser wants 16 kHz wideband audio. */
const SAMPLE_RATE = 16_000;

/**
 * Fetches audio SSRF-safely, decodes it (any container ffmpeg reads) to 16 kHz mono PCM and transcribes it with
 * the local `default` STT engine, with segment timestamps.
 */
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
  const decoded = await decodeToPcm(buf, { sampleRate: SAMPLE_RATE, signal, param: 'sourceUrl' });
  const stt = speechEngines(infra).stt.get('default');
  return stt
    .transcribe({
      pcm: decoded.pcm,
      sampleRate: decoded.sampleRate,
      language: 'en',
      mode: 'accurate',
      timestamps: 'segment',
      diarize: false,
      signal,
    })
    .catch((e: unknown) => {
      throw ragEngineError(e, 'default');
    });
}
