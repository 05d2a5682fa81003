import { writeFile } from 'node:fs/promises';
import { collect } from '../../kernel/audio/pcm.ts';
import { encodeWav } from '../../kernel/audio/wav.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { isEngineError } from '../../kernel/errors/engine-error.ts';
import { resolveProviderKey } from '../../platform/keys/provider-key.ts';
import type { TranscriptionResult } from '../../engines/stt/types.ts';
import type { SttProvider } from '../../contracts/providers.ts';
import { sttEngineFor, transcribeAudio } from '../speech/transcription.ts';
import type { SpokenVoice, TtsEngine } from '../../engines/tts/types.ts';
import type { Infra } from '../../platform/infra.ts';
import { jobKeyHeaders, type JobRef } from './job-keys.ts';

/** The TTS engine of a video job (the speech area's registry); an unknown provider is 400 on `tts_provider`. */
export function videoTts(infra: Infra, provider: string): TtsEngine {
  try {
    return infra.engines.tts.get(provider);
  } catch (e) {
    if (isEngineError(e) && e.kind === 'not_configured')
      throw new ApiError('provider_unavailable', { provider, detail: e.message }, 'tts_provider');
    throw e;
  }
}

/**
 * The TTS key inside a job's worker: the job's sealed caller key (opened only for a keyed engine), then the
 * developer's stored key, then the platform's. Undefined for the local engine.
 */
async function jobTtsKey(infra: Infra, job: JobRef, provider: string): Promise<string | undefined> {
  const engine = videoTts(infra, provider);
  if (!engine.capabilities.requiresKey) return undefined;
  const headers = await jobKeyHeaders(infra, job, provider);
  return (await resolveProviderKey(infra, { engine, developerId: job.owner_id, headers }))?.key;
}

/**
 * The voice a job speaks `language` with: the caller's `voice_id`, else the provider's multilingual voice for it
 * (the local engine: flite for English, espeak-ng's voice otherwise; a vendor: see TtsEngine.multilingualVoice).
 */
export async function voiceFor(
  infra: Infra,
  provider: string,
  voiceId: string | undefined,
  language: string | undefined,
): Promise<SpokenVoice> {
  if (voiceId && voiceId !== 'default') return { voiceId };
  return videoTts(infra, provider).multilingualVoice(language ?? 'en');
}

/** Synthesizes text to a mono WAV file; returns its duration in seconds. */
export async function synthesizeToWav(
  infra: Infra,
  tts: { provider: string; job: JobRef },
  input: { text: string; voiceId: string; model?: string; language?: string; speed?: number },
  path: string,
  signal: AbortSignal,
): Promise<number> {
  const audio = await videoTts(infra, tts.provider).synthesize({
    text: input.text,
    voiceId: input.voiceId,
    model: input.model,
    speed: input.speed ?? 1,
    pitch: 1,
    language: input.language,
    apiKey: await jobTtsKey(infra, tts.job, tts.provider),
    owner: { tenant: tts.job.owner_id },
    signal,
  });
  const pcm = await collect(audio.chunks);
  await writeFile(path, encodeWav(pcm, audio.sampleRate));
  return pcm.length / 2 / audio.sampleRate;
}

/**
 * Transcribes the audio of a video job's media file through the speech domain's one media transcription (decode,
 * engine, key resolution), with segment timestamps. The caller's sealed key for a keyed engine is opened here;
 * the seconds are part of the video job's charge. `language` '' lets a vendor engine detect it.
 */
export async function transcribeMedia(
  infra: Infra,
  input: { job: JobRef | null; provider: SttProvider; language: string; path: string },
  signal: AbortSignal,
): Promise<TranscriptionResult> {
  const engine = sttEngineFor(infra, { provider: input.provider, language: input.language });
  const headers =
    input.job && engine.capabilities.requiresKey ? await jobKeyHeaders(infra, input.job, input.provider) : {};
  const out = await transcribeAudio(infra, {
    developerId: input.job?.owner_id ?? '',
    requestId: input.job?.id ?? '',
    headers,
    options: {
      provider: input.provider,
      language: input.language,
      mode: 'fast',
      timestamps: 'segment',
      diarize: false,
    },
    audio: input.path,
    param: 'video_url',
    operation: 'transcribe',
    signal,
    maxSeconds: infra.config.VIDEO_MAX_INPUT_SECONDS,
    chargedByCaller: true,
  });
  return out.result;
}
