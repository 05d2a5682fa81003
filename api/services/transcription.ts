import type { FastifyRequest } from 'fastify';
import { decodeToPcm } from '../../shared/audio/ffmpeg.ts';
import { sniffMedia } from '../../shared/audio/formats.ts';
import { engineToApiError } from '../../shared/agents/engine-errors.ts';
import type { Reservation } from '../../shared/billing/types.ts';
import { TranscribeOptions, type TranscriptionJob, type TranscriptionResult } from '../../shared/contracts/speech.ts';
import {
  getTranscriptionJob,
  insertTranscriptionJob,
  type TranscriptionJobRow,
  type TranscriptionSource,
} from '../../shared/db/transcription-jobs.ts';
import { speechEngines } from '../../shared/engines/speech-registry.ts';
import { isEnglish } from '../../shared/engines/stt/pocketsphinx.ts';
import type { SttEngine, SttRequest } from '../../shared/engines/stt/types.ts';
import { ApiError } from '../../shared/errors/api-error.ts';
import { isRetryable } from '../../shared/errors/retry.ts';
import { newId } from '../../shared/ids.ts';
import { safeFetchBuffer } from '../../shared/net/safe-fetch.ts';
import type { Infra } from '../../shared/runtime/infra.ts';
import { objectKey } from '../../shared/storage/keys.ts';
import { assertLooksLikeMedia, parseInput, type SpeechRequestInput } from './speech-input.ts';
import { keyFor, meterOf } from './speech.ts';

/** The rate every engine gets: pocketsphinx needs 16 kHz, and it is what vendors' speech models work at. */
const STT_RATE = 16000;

export interface TranscribeCall {
  developerId: string;
  requestId: string;
  /** Request headers for caller keys (`{}` in a job: stored and platform keys only). */
  headers: Record<string, string | string[] | undefined>;
  options: TranscribeOptions;
  audio: Buffer;
  /** Where the audio came from, for error messages. */
  param: string;
  operation: string;
  prompt?: string;
  signal: AbortSignal;
  /** Longest audio accepted (seconds). */
  maxSeconds: number;
  /** The hold's key in a job (one hold per job, however often it runs); none for a request. */
  holdKey?: string;
}

export interface TranscribeOutcome {
  result: TranscriptionResult & { segments: (TranscriptionResult['segments'][number] & { confidence?: number })[] };
  provider: string;
  billable: boolean;
}

/** The engine for a provider, with the default engine's language check done before any work. */
export function sttEngineFor(infra: Infra, options: TranscribeOptions): SttEngine {
  const engine = speechEngines(infra).stt.get(options.provider);
  const langs = engine.capabilities.languages;
  const lang = options.language.toLowerCase();
  const supported =
    langs.includes('*') ||
    lang === '' ||
    langs.some((l) => lang === l || lang.startsWith(`${l}-`) || lang.startsWith(`${l}_`));
  if (!supported || (engine.provider === 'default' && !isEnglish(options.language))) {
    throw new ApiError(
      'unsupported_language',
      {
        detail: `language "${options.language}" is not supported by the ${engine.provider} engine (${engine.label}: ${langs.join(', ')}); leave language empty or pick a provider that supports it`,
      },
      'language',
    );
  }
  return engine;
}

/** A transcription ready to run: engine and key chosen, audio decoded, its seconds reserved. */
export interface PreparedTranscription {
  engine: SttEngine;
  billable: boolean;
  /** Audio seconds reserved, and committed when the transcript is complete. */
  seconds: number;
  reservation: Reservation | undefined;
  request: SttRequest;
}

/**
 * Decodes any container to 16 kHz mono PCM and reserves the audio seconds: what every transcription does before
 * the engine runs. The caller settles the reservation (commit after the transcript, refund on failure).
 */
export async function prepareTranscription(infra: Infra, call: TranscribeCall): Promise<PreparedTranscription> {
  const engine = sttEngineFor(infra, call.options);
  const key = await keyFor(infra, engine, call.developerId, call.headers);
  const billable = key?.billable ?? true;
  const decoded = await decodeToPcm(call.audio, {
    sampleRate: STT_RATE,
    signal: call.signal,
    maxSeconds: call.maxSeconds,
    param: call.param,
  });
  const seconds = Math.max(0.001, decoded.duration);
  const reservation = await meterOf(infra)?.reserve({
    developerId: call.developerId,
    category: 'stt',
    units: seconds,
    unit: 'audio seconds',
    provider: engine.provider,
    billable,
    requestId: call.requestId,
    operation: call.operation,
    holdKey: call.holdKey,
  });
  const request: SttRequest = {
    pcm: decoded.pcm,
    sampleRate: STT_RATE,
    language: call.options.language,
    mode: call.options.mode,
    timestamps: call.options.timestamps,
    diarize: call.options.diarize,
    prompt: call.prompt,
    apiKey: key?.key,
    signal: call.signal,
  };
  return { engine, billable, seconds, reservation, request };
}

/**
 * Decodes, reserves the audio seconds, transcribes and settles the charge. Shared by the synchronous routes, the
 * OpenAI-compatible route and the async job.
 */
export async function transcribeAudio(infra: Infra, call: TranscribeCall): Promise<TranscribeOutcome> {
  const { engine, billable, seconds, reservation, request } = await prepareTranscription(infra, call);
  try {
    const result = await engine.transcribe(request);
    await reservation?.commit(seconds);
    return { result, provider: engine.provider, billable };
  } catch (e) {
    await reservation?.refund();
    throw engineToApiError(e, engine.provider);
  }
}

/** Fetches `audioUrl` SSRF-safely (size and time bounded by OUTBOUND_* settings). */
export async function fetchAudioUrl(infra: Infra, url: string, signal?: AbortSignal): Promise<Buffer> {
  const { buf } = await safeFetchBuffer(url, {
    policy: infra.addressPolicy,
    maxBytes: infra.config.OUTBOUND_MAX_BYTES,
    timeoutMs: infra.config.OUTBOUND_TIMEOUT_MS,
    signal,
    param: 'audioUrl',
  });
  if (buf.length && sniffMedia(buf.subarray(0, 512)) === 'not_media') {
    throw new ApiError(
      'unsupported_media_type',
      { detail: 'The audioUrl does not point at audio: it returned a document, an image or text.' },
      'audioUrl',
    );
  }
  return buf;
}

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

/** POST /v1/transcribe: blocks until the transcript is ready. */
export async function transcribeSync(
  infra: Infra,
  req: FastifyRequest,
  input: SpeechRequestInput,
  signal: AbortSignal,
): Promise<TranscriptionResult> {
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
    maxSeconds: infra.config.SPEECH_SYNC_MAX_AUDIO_SECONDS,
  });
  req.providerUsed = out.provider;
  req.usageBypassed = !out.billable;
  return toContractResult(out.result);
}

/** The contract's Transcription result: no engine extras (confidence), speaker only when diarized. */
export function toContractResult(r: TranscriptionResult): TranscriptionResult {
  return {
    text: r.text,
    segments: r.segments.map((s) => ({
      start: s.start,
      end: s.end,
      text: s.text,
      ...(s.speaker ? { speaker: s.speaker } : {}),
    })),
    ...(r.words ? { words: r.words.map((w) => ({ start: w.start, end: w.end, word: w.word })) } : {}),
    language: r.language,
    duration: r.duration,
  };
}

/**
 * POST /v1/transcribe/async: an uploaded file goes to S3 first, then the row (processing) and the queue job. The
 * language/provider check runs now so that an impossible request is a 400, not a failed job.
 */
export async function submitTranscriptionJob(
  infra: Infra,
  req: FastifyRequest,
  input: SpeechRequestInput,
): Promise<{ id: string; status: 'processing'; createdAt: string }> {
  const { options, file } = parseTranscribeInput(input);
  const engine = sttEngineFor(infra, options);
  const developerId = req.auth.developerId;
  const key = await keyFor(infra, engine, developerId, req.headers);
  if (key?.source === 'header') {
    // A caller's header key cannot travel into the job (it is not stored); say so rather than fail later.
    throw ApiError.validation(
      'asynchronous jobs cannot use a key sent in a header; store it with POST /v1/provider-keys',
      'provider',
    );
  }
  const id = newId('job');
  let source: TranscriptionSource;
  if (file) {
    const s3Key = objectKey(developerId, 'uploads', id, 'audio');
    await infra.storage.put(s3Key, file, input.file?.mimetype || 'application/octet-stream');
    source = { kind: 'upload', key: s3Key };
  } else {
    source = { kind: 'url', url: options.audioUrl! };
  }
  const { audioUrl: _url, ...opts } = options;
  const row = await insertTranscriptionJob(infra.db, {
    id,
    developer_id: developerId,
    provider: engine.provider,
    options: opts,
    source,
    request_id: req.id,
  });
  await infra.queues.enqueue('speech.transcribe', { transcriptionJobId: id }, { jobId: id });
  req.providerUsed = engine.provider;
  req.usageBypassed = key ? !key.billable : false;
  return { id: row.id, status: 'processing', createdAt: row.created_at.toISOString() };
}

export async function getTranscription(infra: Infra, developerId: string, id: string): Promise<TranscriptionJob> {
  const row = await getTranscriptionJob(infra.db, developerId, id);
  if (!row) throw ApiError.notFound('transcription job', id);
  return toJob(row);
}

export function toJob(row: TranscriptionJobRow): TranscriptionJob {
  return {
    id: row.id,
    status: row.status,
    ...(row.result ? { result: row.result as TranscriptionResult } : {}),
    ...(row.error ? { error: row.error } : {}),
    createdAt: row.created_at.toISOString(),
    ...(row.completed_at ? { completedAt: row.completed_at.toISOString() } : {}),
  };
}

/** Whether a failure is final for a job: the input or the request is at fault, or retrying cannot help. */
export function isPermanentFailure(e: unknown): boolean {
  return !isRetryable(e);
}
