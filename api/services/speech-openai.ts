import type { FastifyBaseLogger } from 'fastify';
import type { TranscriptionResult } from '../../shared/contracts/speech.ts';
import { STT_PROVIDERS, TTS_PROVIDERS } from '../../shared/contracts/providers.ts';
import type { SttProgress } from '../../shared/engines/stt/types.ts';
import { ApiError, isApiError } from '../../shared/kernel/errors/api-error.ts';

/**
 * The OpenAI-compatible audio API maps `model` to one of our engines:
 * - `default`, `flite` (TTS) and `pocketsphinx` (STT) are the local engines;
 * - OpenAI's own model names (`tts-1`, `tts-1-hd`, `gpt-4o-mini-tts`, `whisper-1`, `gpt-4o-transcribe`,
 *   `gpt-4o-mini-transcribe`) are accepted as aliases of the local engines, so an unchanged client works; the
 *   X-Provider-Used header says `default`;
 * - `<provider>` or `<provider>/<vendor model>` (e.g. `openai/tts-1`, `elevenlabs/eleven_turbo_v2_5`,
 *   `deepgram/nova-3`) reaches that vendor with that model (`<provider>/tts` and `<provider>/stt` mean the vendor's
 *   default model).
 */
export const LOCAL_TTS_MODELS = ['default', 'flite', 'tts-1', 'tts-1-hd', 'gpt-4o-mini-tts'];
export const LOCAL_STT_MODELS = ['default', 'pocketsphinx', 'whisper-1', 'gpt-4o-transcribe', 'gpt-4o-mini-transcribe'];

export function resolveModel(kind: 'tts' | 'stt', model: string): { provider: string; model: string | null } {
  const local = kind === 'tts' ? LOCAL_TTS_MODELS : LOCAL_STT_MODELS;
  if (local.includes(model)) return { provider: 'default', model: null };
  const [provider, ...rest] = model.split('/');
  const known: readonly string[] = kind === 'tts' ? TTS_PROVIDERS : STT_PROVIDERS;
  if (!provider || !known.includes(provider)) {
    throw new ApiError(
      'validation_failed',
      { detail: `model: unknown ${kind.toUpperCase()} model "${model}"; GET /v1/audio/models lists the models` },
      'model',
    );
  }
  const vendorModel = rest.join('/');
  return { provider, model: vendorModel && vendorModel !== kind ? vendorModel : null };
}

/** OpenAI's voice names on the local engine: flite voices first, espeak-ng female variants for the rest. */
export const OPENAI_VOICE_MAP: Record<string, string> = {
  alloy: 'flite-slt',
  ash: 'flite-rms',
  ballad: 'flite-awb',
  coral: 'espeak-en-us-f',
  echo: 'flite-kal16',
  fable: 'espeak-en-gb',
  onyx: 'flite-rms',
  nova: 'flite-slt',
  sage: 'espeak-en-gb-f',
  shimmer: 'espeak-en-029-f',
  verse: 'flite-awb',
  marin: 'flite-slt',
  cedar: 'flite-kal16',
};

export function voiceFor(provider: string, voice: string | { id: string }): string {
  const id = typeof voice === 'string' ? voice : voice.id;
  if (provider === 'default') return OPENAI_VOICE_MAP[id] ?? id;
  return id;
}

export interface AudioModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /** Extra field: which endpoint takes it. */
  kind: 'tts' | 'stt';
}

const CREATED = 1_763_700_000; // fixed: these ids do not change between deployments

/** GET /v1/audio/models: the local models, their OpenAI aliases, and every registered vendor engine. */
export function audioModels(ttsProviders: string[], sttProviders: string[]): { object: 'list'; data: AudioModel[] } {
  const model = (id: string, kind: 'tts' | 'stt', owned_by: string): AudioModel => ({
    id,
    object: 'model',
    created: CREATED,
    owned_by,
    kind,
  });
  const data = [
    model('flite', 'tts', 'flite.tts+espeak-ng.tts'),
    ...LOCAL_TTS_MODELS.filter((m) => !['default', 'flite'].includes(m)).map((m) =>
      model(m, 'tts', 'flite.tts+espeak-ng.tts'),
    ),
    model('pocketsphinx', 'stt', 'pocketsphinx.stt'),
    ...LOCAL_STT_MODELS.filter((m) => !['default', 'pocketsphinx'].includes(m)).map((m) =>
      model(m, 'stt', 'pocketsphinx.stt'),
    ),
    ...ttsProviders.filter((p) => p !== 'default').map((p) => model(`${p}/tts`, 'tts', p)),
    ...sttProviders.filter((p) => p !== 'default').map((p) => model(`${p}/stt`, 'stt', p)),
  ];
  return { object: 'list', data };
}

type Segment = TranscriptionResult['segments'][number] & { confidence?: number };

const LANGUAGE_NAMES: Record<string, string> = { en: 'english' };

/** `verbose_json` as OpenAI shapes it; `avg_logprob` is the log of the decoder's mean word posterior. */
export function verboseJson(r: TranscriptionResult, granularities: string[]): Record<string, unknown> {
  const wantWords = granularities.includes('word');
  const wantSegments = granularities.length === 0 || granularities.includes('segment');
  const lang = r.language.split('-')[0]!.toLowerCase();
  return {
    task: 'transcribe',
    language: LANGUAGE_NAMES[lang] ?? r.language,
    duration: r.duration,
    text: r.text,
    ...(wantSegments
      ? {
          segments: (r.segments as Segment[]).map((s, id) => ({
            id,
            seek: 0,
            start: s.start,
            end: s.end,
            text: s.text,
            tokens: [],
            temperature: 0,
            avg_logprob:
              s.confidence !== undefined ? Math.round(Math.log(Math.max(1e-6, s.confidence)) * 1000) / 1000 : 0,
            compression_ratio: 1,
            no_speech_prob: 0,
            ...(s.speaker ? { speaker: s.speaker } : {}),
          })),
        }
      : {}),
    ...(wantWords ? { words: (r.words ?? []).map((w) => ({ word: w.word, start: w.start, end: w.end })) } : {}),
    usage: { type: 'duration', seconds: Math.ceil(r.duration) },
  };
}

function timestamp(seconds: number, sep: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${sep}${pad(ms % 1000, 3)}`;
}

export function toSrt(r: TranscriptionResult): string {
  return r.segments
    .map((s, i) => `${i + 1}\n${timestamp(s.start, ',')} --> ${timestamp(s.end, ',')}\n${s.text.trim()}\n`)
    .join('\n');
}

export function toVtt(r: TranscriptionResult): string {
  const cues = r.segments.map((s) => `${timestamp(s.start, '.')} --> ${timestamp(s.end, '.')}\n${s.text.trim()}\n`);
  return `WEBVTT\n\n${cues.join('\n')}`;
}

/** One SSE event line block. */
export function sse(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

/**
 * `stream=true` on /v1/audio/transcriptions as OpenAI streams it: a `transcript.text.delta` per segment as it is
 * decoded (segments after the first start with a space), then `transcript.text.done` whose text is exactly the
 * deltas concatenated, with the duration usage. A failure after the stream has opened is the error envelope as an
 * event (the `openai` SDK raises it as an APIError); a client that has gone away gets nothing more.
 */
export async function* transcriptionSse(
  events: AsyncIterable<SttProgress>,
  ctx: { signal: AbortSignal; requestId: string; log: FastifyBaseLogger },
): AsyncGenerator<string> {
  let text = '';
  try {
    for await (const ev of events) {
      if (ev.type === 'segment') {
        if (!ev.segment.text) continue;
        const delta = (text ? ' ' : '') + ev.segment.text;
        text += delta;
        yield sse({ type: 'transcript.text.delta', delta });
      } else {
        const usage = { type: 'duration', seconds: Math.ceil(ev.result.duration) };
        yield sse({ type: 'transcript.text.done', text, usage });
      }
    }
  } catch (e) {
    if (ctx.signal.aborted) return;
    const err = isApiError(e) ? e : new ApiError('internal_error');
    if (!isApiError(e)) ctx.log.error({ err: e, requestId: ctx.requestId }, 'transcription stream failed');
    const { type, code, message, param } = err;
    yield sse({ error: { type, code, message, param, requestId: ctx.requestId } });
  }
}
