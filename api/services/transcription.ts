import type { FastifyRequest } from 'fastify';
import { TranscribeOptions, type TranscriptionJob, type TranscriptionResult } from '../../shared/contracts/speech.ts';
import { getTranscriptionJob, type TranscriptionJobRow } from '../../shared/domains/speech/transcription-store.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { submitTranscription } from '../../shared/domains/speech/transcription-jobs.ts';
import {
  fetchAudioUrl,
  sttEngineFor,
  toContractResult,
  transcribeAudio,
} from '../../shared/domains/speech/transcription.ts';
import { assertLooksLikeMedia, parseInput, type SpeechRequestInput } from './speech-input.ts';

/** Options plus exactly one audio source (file or audioUrl). */
export function parseTranscribeInput(input: SpeechRequestInput): { options: TranscribeOptions; file: Buffer | null } {
  const options = parseInput(TranscribeOptions, input.fields);
  if (input.file && options.audioUrl) throw ApiError.validation('send either file or audioUrl, not both', 'audioUrl');
  if (!input.file && !options.audioUrl) {
    throw ApiError.validation('audio is required: upload it as multipart field "file" or send audioUrl', 'file');
  }
  if (input.file) assertLooksLikeMedia(input.file.buffer, 'file');
  return { options, file: input.file?.buffer ?? null };
}

/**
 * Longest audio a synchronous transcription takes (longer is a 413 pointing to the async route). The local engine
 * decodes at about 1.7x real time on a busy core: past its own cap a request could not finish before a client
 * gives up (a 20-minute file took 33 minutes).
 */
export function syncMaxSeconds(infra: Infra, provider: string): number {
  const all = infra.config.SPEECH_SYNC_MAX_AUDIO_SECONDS;
  return provider === 'default' ? Math.min(all, infra.config.SPEECH_SYNC_LOCAL_MAX_AUDIO_SECONDS) : all;
}

/** POST /v1/transcribe: blocks until the transcript is ready. */
export async function transcribeSync(
  infra: Infra,
  req: FastifyRequest,
  input: SpeechRequestInput,
  signal: AbortSignal,
): Promise<{ result: TranscriptionResult; model: string }> {
  const { options, file } = parseTranscribeInput(input);
  sttEngineFor(infra, options);
  const audio = file ?? (await fetchAudioUrl(infra, options.audioUrl!, signal));
  const out = await transcribeAudio(infra, {
    developerId: req.auth.developerId,
    requestId: req.id,
    headers: req.headers,
    options,
    audio,
    param: file ? 'file' : 'audioUrl',
    operation: 'transcribe',
    signal,
    maxSeconds: syncMaxSeconds(infra, options.provider),
    refuseLonger: true,
  });
  req.providerUsed = out.provider;
  req.usageBypassed = !out.billable;
  return { result: toContractResult(out.result), model: out.model };
}

/** POST /v1/transcribe/async: a caller's `X-Provider-Key-*` header travels with the job, sealed. */
export async function submitTranscriptionJob(
  infra: Infra,
  req: FastifyRequest,
  input: SpeechRequestInput,
): Promise<{ id: string; status: 'processing'; createdAt: string }> {
  const { options, file } = parseTranscribeInput(input);
  const { row, provider, billable } = await submitTranscription(infra, {
    developerId: req.auth.developerId,
    requestId: req.id,
    headers: req.headers,
    options,
    file: file ? { buffer: file, mimetype: input.file?.mimetype ?? '' } : null,
  });
  req.providerUsed = provider;
  req.usageBypassed = !billable;
  return { id: row.id, status: 'processing', createdAt: row.created_at.toISOString() };
}

/** A developer's transcription job, with the engine that took it (reported in X-Provider-Used on reads). */
export async function getTranscription(
  infra: Infra,
  developerId: string,
  id: string,
): Promise<{ job: TranscriptionJob; provider: string }> {
  const row = await getTranscriptionJob(infra.db, developerId, id);
  if (!row) throw ApiError.notFound('transcription job', id);
  return { job: toJob(row), provider: row.provider };
}

export function toJob(row: TranscriptionJobRow): TranscriptionJob {
  return {
    id: row.id,
    status: row.status,
    ...(row.result ? { result: row.result as TranscriptionResult } : {}),
    ...(row.status === 'processing' && row.progress ? { progress: row.progress } : {}),
    ...(row.error ? { error: row.error } : {}),
    createdAt: row.created_at.toISOString(),
    ...(row.completed_at ? { completedAt: row.completed_at.toISOString() } : {}),
  };
}
