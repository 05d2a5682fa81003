import { engineToApiError, isEngineError } from '../../kernel/errors/engine-error.ts';
import { decodeToPcm, type AudioInput } from '../../kernel/audio/ffmpeg.ts';
import { sniffMedia } from '../../kernel/audio/formats.ts';
import type { Reservation } from '../../platform/metering/types.ts';
import type { TranscribeOptions, TranscriptionResult } from '../../contracts/speech.ts';
import { isEnglish } from '../../engines/stt/pocketsphinx.ts';
import type { SttEngine, SttRequest } from '../../engines/stt/types.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { isRetryable } from '../../kernel/errors/retry.ts';
import { ProcessTimeoutError } from '../../kernel/process/spawn.ts';
import { safeFetchBuffer } from '../../kernel/net/safe-fetch.ts';
import type { Infra } from '../../platform/infra.ts';
import { resolveProviderKey, type ProviderKeyHeaders } from '../../platform/keys/provider-key.ts';

/** The rate every engine gets: pocketsphinx needs 16 kHz, and it is what vendors' speech models work at. */
const STT_RATE = 16000;

/**
 * One transcription of any media, in plain terms: whoever calls it (a route, a transcription job, a video job) has
 * already authenticated the caller. This is the platform's one way to turn media into text: the synchronous and
 * OpenAI-compatible routes, their streamed form, the async job, dubbing and video analysis all come through here.
 */
export interface TranscribeCall {
  developerId: string;
  requestId: string;
  /** Caller keys as `X-Provider-Key-*` headers: the request's, or a job's sealed copy (`{}`: stored/platform only). */
  headers: ProviderKeyHeaders;
  /** Engine, language ('' = detected by the engine where it can), timestamps, diarization. */
  options: Pick<TranscribeOptions, 'provider' | 'language' | 'mode' | 'timestamps' | 'diarize'> &
    Partial<Pick<TranscribeOptions, 'prompt' | 'keywords'>>;
  /** Any container ffmpeg reads (audio or video): bytes in memory or a file path (a video job's download). */
  audio: AudioInput;
  /** Where the audio came from, for error messages. */
  param: string;
  operation: string;
  prompt?: string;
  signal: AbortSignal;
  /** Longest audio accepted (seconds). */
  maxSeconds: number;
  /**
   * Longer audio is refused (413, pointing to the async route) instead of cut at `maxSeconds`: a synchronous
   * request that could not finish in time must say so, not answer for part of the recording or never.
   */
  refuseLonger?: boolean;
  /** The hold's key in a job (one hold per job, however often it runs); none for a request. */
  holdKey?: string;
  /**
   * The audio seconds are part of work charged as a whole by the caller (a video job is billed per second of
   * video): nothing is reserved here. Otherwise the seconds are reserved, and committed with the transcript.
   */
  chargedByCaller?: boolean;
}

export interface TranscribeOutcome {
  result: TranscriptionResult & { segments: (TranscriptionResult['segments'][number] & { confidence?: number })[] };
  provider: string;
  /** The engine and model that served it, in words ("pocketsphinx, local, biased to this request's prompt"). */
  model: string;
  billable: boolean;
}

/** The engine for a provider, with the default engine's language check done before any work. */
export function sttEngineFor(infra: Infra, options: Pick<TranscribeOptions, 'provider' | 'language'>): SttEngine {
  const engine = infra.engines.stt.get(options.provider);
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
  reservation: Reservation;
  request: SttRequest;
}

/**
 * Decodes any container to 16 kHz mono PCM and reserves the audio seconds: what every transcription does before
 * the engine runs. The caller settles the reservation (commit after the transcript, refund on failure).
 */
export async function prepareTranscription(infra: Infra, call: TranscribeCall): Promise<PreparedTranscription> {
  const engine = sttEngineFor(infra, call.options);
  const key = await resolveProviderKey(infra, { engine, developerId: call.developerId, headers: call.headers });
  const billable = key?.billable ?? true;
  const decoded = await decodeToPcm(call.audio, {
    sampleRate: STT_RATE,
    signal: call.signal,
    // One second more than allowed is enough to know that the audio is longer.
    maxSeconds: call.refuseLonger ? call.maxSeconds + 1 : call.maxSeconds,
    param: call.param,
  });
  if (call.refuseLonger && decoded.duration > call.maxSeconds) {
    throw new ApiError(
      'payload_too_large',
      {
        what: `audio for the synchronous ${call.options.provider} engine (send longer recordings to POST /v1/transcribe/async)`,
        limit: `${call.maxSeconds} seconds`,
      },
      call.param,
    );
  }
  const seconds = Math.max(0.001, decoded.duration);
  const prompt = call.prompt ?? call.options.prompt;
  const languageModel = await requestLanguageModel(infra, engine, prompt, call.options.keywords, call.signal);
  const reservation = call.chargedByCaller
    ? CHARGED_BY_CALLER
    : await infra.meter.reserve({
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
    prompt,
    ...(languageModel ? { languageModel } : {}),
    apiKey: key?.key,
    owner: { tenant: call.developerId },
    signal: call.signal,
  };
  return { engine, billable, seconds, reservation, request };
}

/**
 * The local engine's model for a request with a `prompt` or `keywords`: the general model interpolated with their
 * words (built once per distinct text and kept, like an agent's). Vendors take the prompt as it is.
 */
/** Seconds a request whose model build ran out of time is told to wait before trying again. */
const BUSY_RETRY_S = 30;

async function requestLanguageModel(
  infra: Infra,
  engine: SttEngine,
  prompt: string | undefined,
  keywords: string[] | undefined,
  signal: AbortSignal,
): Promise<SttRequest['languageModel'] | undefined> {
  if (engine.provider !== 'default' || (!prompt?.trim() && !keywords?.length)) return undefined;
  const lm = infra.engines.languageModels;
  // Each keyword is its own sentence: a name is likely on its own, not only inside the prompt's sentences.
  const text = lm.sourceText([prompt ?? '', ...(keywords ?? []).map((k) => `${k}.`)]);
  const label = `biased to this request's ${prompt?.trim() ? (keywords?.length ? 'prompt and keywords' : 'prompt') : 'keywords'}`;
  try {
    return await lm.get(text, label, signal);
  } catch (e) {
    if (signal.aborted) throw e;
    // A build past its time limit is a busy machine (builds are niced), not a missing tool: worth a retry.
    if (e instanceof ProcessTimeoutError) {
      throw new ApiError('over_capacity', { retryAfter: BUSY_RETRY_S }, null, { 'retry-after': String(BUSY_RETRY_S) });
    }
    throw new ApiError('feature_not_configured', {
      detail: `the local engine could not build a model for this prompt: ${(e as Error).message}`,
    });
  }
}

/** The reservation of a transcription that is part of work charged as a whole (nothing held, nothing to settle). */
const CHARGED_BY_CALLER: Reservation = {
  credits: 0,
  extendTo: async () => {},
  commit: async () => {},
  refund: async () => {},
};

/**
 * Decodes, reserves the audio seconds, transcribes and settles the charge: the one media transcription (see
 * TranscribeCall). Engine failures come back as ApiErrors (`engineToApiError`).
 */
export async function transcribeAudio(
  infra: Infra,
  call: TranscribeCall,
  onProgress?: (doneSeconds: number, totalSeconds: number) => void,
): Promise<TranscribeOutcome> {
  const { engine, billable, seconds, reservation, request } = await prepareTranscription(infra, call);
  try {
    const result = onProgress
      ? await withProgress(engine, request, seconds, onProgress)
      : await engine.transcribe(request);
    await reservation.commit(seconds);
    return { result, provider: engine.provider, model: engine.describe(request), billable };
  } catch (e) {
    await reservation.refund();
    throw sttFailure(e, engine.provider);
  }
}

/**
 * Transcribes piece by piece, reporting how far it got: the local engine cuts the recording at pauses into pieces of
 * at most 30 s (segments with their own times), decodes them in parallel in as many decoder slots as it has, and
 * reports each utterance as it comes; a vendor answers at once. Used by the async job (long recordings).
 */
async function withProgress(
  engine: SttEngine,
  request: SttRequest,
  total: number,
  onProgress: (doneSeconds: number, totalSeconds: number) => void,
): Promise<TranscriptionResult> {
  for await (const ev of engine.transcribeIncremental({ ...request, parallel: true })) {
    if (ev.type === 'result') return ev.result;
    onProgress(Math.min(total, ev.segment.end), total);
  }
  throw new Error('the engine ended without a result');
}

/**
 * An engine failure as an API error: the local engine missing its model or binary is a 503 the operator fixes
 * (`feature_not_configured`); vendor failures map like every other engine call (key rejected → 400, timeout →
 * 504, anything else → 502), keeping their retryability.
 */
export function sttFailure(e: unknown, provider: string): unknown {
  if (isEngineError(e) && provider === 'default' && e.kind === 'unavailable') {
    return new ApiError('feature_not_configured', { detail: e.message });
  }
  return engineToApiError(e, provider);
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

/** Whether a failure is final for a job: the input or the request is at fault, or retrying cannot help. */
export function isPermanentFailure(e: unknown): boolean {
  return !isRetryable(e);
}
