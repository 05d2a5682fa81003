import type { TranscriptionResult } from '../../engines/stt/types.ts';
import { safeFetchBuffer } from '../../kernel/net/safe-fetch.ts';
import type { Infra } from '../../platform/infra.ts';
import { transcribeAudio } from '../speech/transcription.ts';

/** Contract limit of transcription uploads, applied to fetched audio too. */
const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

/**
 * Fetches audio SSRF-safely and transcribes it with the local `default` STT engine, with segment timestamps,
 * through the speech domain's one media transcription (any container ffmpeg reads). The seconds are part of the
 * ingest's charge, not metered on their own.
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
  const out = await transcribeAudio(infra, {
    developerId: '',
    requestId: '',
    headers: {},
    options: { provider: 'default', language: 'en', mode: 'accurate', timestamps: 'segment', diarize: false },
    audio: buf,
    param: 'sourceUrl',
    operation: 'transcribe',
    signal: signal ?? new AbortController().signal,
    maxSeconds: infra.config.SPEECH_MAX_AUDIO_SECONDS,
    chargedByCaller: true,
  });
  return out.result;
}
