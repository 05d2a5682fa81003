import type { FastifyRequest } from 'fastify';
import { AUDIO_CONTENT_TYPES, encodeStream, type AudioFormat } from '../../shared/audio/index.ts';
import type { Reservation } from '../../shared/billing/types.ts';
import { engineToApiError } from '../../shared/agents/engine-errors.ts';
import { speechEngines } from '../../shared/engines/speech-registry.ts';
import type { TtsEngine, Voice } from '../../shared/engines/tts/types.ts';
import type { Infra } from '../../shared/runtime/infra.ts';
import { keyFor } from '../../shared/speech/keys.ts';

export interface SynthesisInput {
  provider: string;
  text: string;
  voiceId: string;
  speed: number;
  pitch: number;
  model?: string | null;
  format: AudioFormat;
  /** Resample to this rate (the OpenAI `pcm` format is 24 kHz). */
  outputRate?: number;
  /** Credit-weight operation: `synthesize` or `audio.speech`. */
  operation: string;
}

export interface SynthesisStream {
  contentType: string;
  /** Encoded audio, first chunk already produced (so early failures become error envelopes, not cut streams). */
  body: AsyncIterable<Buffer>;
  provider: string;
  billable: boolean;
}

/**
 * Synthesizes and encodes as a stream. The first encoded chunk is awaited before returning, so a bad voice, a
 * rejected vendor key or a dead engine is an error response; after that, audio flows as it is made. Metering:
 * the characters are reserved up front, committed when the stream completes and refunded when it fails or the
 * client goes away.
 */
export async function synthesizeStream(
  infra: Infra,
  req: FastifyRequest,
  input: SynthesisInput,
  signal: AbortSignal,
): Promise<SynthesisStream> {
  const developerId = req.auth.developerId;
  const engine: TtsEngine = speechEngines(infra).tts.get(input.provider);
  const key = await keyFor(infra, engine, developerId, req.headers);
  const billable = key?.billable ?? true;
  req.providerUsed = engine.provider;
  req.usageBypassed = !billable;
  const units = input.text.length;
  const reservation: Reservation | undefined = await infra.meter.reserve({
    developerId,
    category: 'tts',
    units,
    unit: 'characters',
    provider: engine.provider,
    billable,
    requestId: req.id,
    operation: input.operation,
  });
  let settled = false;
  const refund = async () => {
    if (settled) return;
    settled = true;
    await reservation?.refund();
  };
  try {
    const audio = await engine.synthesize({
      text: input.text,
      voiceId: input.voiceId,
      speed: input.speed,
      pitch: input.pitch,
      model: input.model,
      apiKey: key?.key,
      signal,
    });
    const encoded = encodeStream(audio.chunks, {
      inputRate: audio.sampleRate,
      format: input.format,
      outputRate: input.outputRate,
      signal,
    })[Symbol.asyncIterator]();
    const first = await encoded.next();
    async function* body(): AsyncGenerator<Buffer> {
      try {
        if (!first.done) yield first.value;
        for (;;) {
          const next = await encoded.next();
          if (next.done) break;
          yield next.value;
        }
        settled = true;
        await reservation?.commit(units);
      } finally {
        await refund();
        await encoded.return?.();
      }
    }
    return { contentType: AUDIO_CONTENT_TYPES[input.format], body: body(), provider: engine.provider, billable };
  } catch (e) {
    await refund();
    throw engineToApiError(e, engine.provider);
  }
}

/** Voices of every registered TTS engine that can list them without a key (the local engine), or of one. */
export async function listVoices(infra: Infra, provider?: string, language?: string): Promise<Voice[]> {
  const registry = speechEngines(infra).tts;
  const providers = provider ? [provider] : registry.providers();
  const lists = await Promise.all(
    providers.map(async (p) => {
      try {
        return await registry.get(p).voices();
      } catch (e) {
        if (provider) throw engineToApiError(e, p);
        return [];
      }
    }),
  );
  const all = lists.flat();
  if (!language) return all;
  const want = language.toLowerCase();
  return all.filter((v) => v.language.toLowerCase() === want || v.language.toLowerCase().startsWith(`${want}-`));
}
