import type { FastifyRequest } from 'fastify';
import { AUDIO_CONTENT_TYPES, encodeStream, type AudioFormat } from '../../shared/kernel/audio/index.ts';
import type { Reservation } from '../../shared/platform/metering/types.ts';
import { engineToApiError, isEngineError } from '../../shared/kernel/errors/engine-error.ts';
import type { TtsEngine, Voice } from '../../shared/engines/tts/types.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { resolveProviderKey } from '../../shared/platform/keys/provider-key.ts';
import { holdLocalSynthesis } from './local-synthesis-limit.ts';

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
  /** The body field that carries the text (`text`, or `input` on the OpenAI route): named in a refusal. */
  textParam?: string;
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
 * the characters are reserved up front, committed when the stream completes, refunded when it fails before any
 * audio went out, and committed in proportion to the audio delivered when the client goes away part-way
 * (DeliveryProgress; docs/billing.md). A text the engine refuses outright (a word the local voices would spell out
 * for minutes) is a 400 before anything is reserved; a local synthesis stopped at its CPU deadline is charged for
 * the share of the text it had worked through (docs/speech.md), not refunded.
 */
export async function synthesizeStream(
  infra: Infra,
  req: FastifyRequest,
  input: SynthesisInput,
  signal: AbortSignal,
): Promise<SynthesisStream> {
  const developerId = req.auth.developerId;
  const engine: TtsEngine = infra.engines.tts.get(input.provider);
  const key = await resolveProviderKey(infra, { engine, developerId, headers: req.headers });
  const billable = key?.billable ?? true;
  req.providerUsed = engine.provider;
  req.usageBypassed = !billable;
  engine.checkText(input.text, input.textParam ?? 'text');
  const units = input.text.length;
  // The developer's place on the local voices is held until the stream has ended, whichever way it ends (the
  // client's going away aborts `signal`, which stops the engine's work too).
  const release = holdLocalSynthesis(infra, engine, developerId);
  signal.addEventListener('abort', release, { once: true });
  let streaming = false;
  try {
    return await synthesizeHeld();
  } finally {
    if (!streaming) release();
  }

  async function synthesizeHeld(): Promise<SynthesisStream> {
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
    try {
      const audio = await engine.synthesize({
        text: input.text,
        voiceId: input.voiceId,
        speed: input.speed,
        pitch: input.pitch,
        model: input.model,
        apiKey: key?.key,
        owner: { tenant: developerId },
        signal,
      });
      const voiceKey = `${engine.provider}:${input.voiceId}:${input.model ?? ''}`;
      const progress = new DeliveryProgress(units, audio.sampleRate, input.speed, spokenRates.get(voiceKey));
      const encoded = encodeStream(progress.counting(audio.chunks), {
        inputRate: audio.sampleRate,
        format: input.format,
        outputRate: input.outputRate,
        signal,
      })[Symbol.asyncIterator]();
      const first = await encoded.next();
      async function* body(): AsyncGenerator<Buffer> {
        let failure: unknown = null;
        try {
          let pending = first;
          while (!pending.done) {
            progress.made(pending.value.length);
            yield pending.value;
            // The consumer asked for more: the chunk before went out.
            progress.delivered(pending.value.length);
            pending = await encoded.next();
          }
          settled = true;
          learnRate(voiceKey, progress.spokenRate());
          await reservation?.commit(units);
        } catch (e) {
          failure = e;
          throw e;
        } finally {
          if (!settled) {
            // The client left part-way: charged for the share of the audio it was sent, never refunded after it.
            settled = true;
            await settleFailed(reservation, units, failure, progress.chargedUnits());
          }
          await encoded.return?.();
          release();
        }
      }
      streaming = true;
      return { contentType: AUDIO_CONTENT_TYPES[input.format], body: body(), provider: engine.provider, billable };
    } catch (e) {
      if (!settled) {
        settled = true;
        await settleFailed(reservation, units, e, 0);
      }
      throw engineToApiError(e, engine.provider);
    }
  }
}

/**
 * Settles a synthesis that did not finish: the larger of `delivered` characters and the work an engine reports it
 * did before it stopped on the text's account (EngineError.workDone) is committed; nothing done is refunded.
 */
export async function settleFailed(
  reservation: Reservation | undefined,
  units: number,
  e: unknown,
  delivered: number,
): Promise<void> {
  const done = isEngineError(e) && e.workDone ? Math.ceil(units * Math.min(1, e.workDone)) : 0;
  const charged = Math.max(done, delivered);
  if (charged > 0) await reservation?.commit(charged).catch(() => reservation.refund());
  else await reservation?.refund();
}

/** Speech runs at about this many characters a second at speed 1 (150 words a minute), until measured. */
export const SPOKEN_CHARS_PER_SECOND = 15;

/**
 * Characters a second at speed 1 each voice was measured to speak (provider:voice:model), from the syntheses this
 * process completed: the length an unfinished synthesis is expected to have. Bounded: a voice seen once is cheap.
 */
const spokenRates = new Map<string, number>();

function learnRate(voiceKey: string, rate: number | null): void {
  if (rate === null) return;
  const prev = spokenRates.get(voiceKey);
  if (prev === undefined && spokenRates.size >= 1000) spokenRates.clear();
  spokenRates.set(voiceKey, prev === undefined ? rate : (prev + rate) / 2);
}

/**
 * How much of a synthesis reached the client, for charging a stream the client abandoned. The share delivered is
 * the encoded bytes sent over those made, applied to the audio the engine made; over the whole synthesis when the
 * engine had finished, else over the larger of the audio made so far and the text's expected length (at the rate
 * this voice was measured to speak, SPOKEN_CHARS_PER_SECOND until it has been). Charged characters =
 * ceil(characters × that share).
 */
export class DeliveryProgress {
  private pcmBytes = 0;
  private engineDone = false;
  private encodedMade = 0;
  private encodedSent = 0;

  constructor(
    private readonly characters: number,
    private readonly sampleRate: number,
    private readonly speed: number,
    private readonly rate = SPOKEN_CHARS_PER_SECOND,
  ) {}

  /** Characters a second at speed 1 this synthesis spoke (null when it made no audio or did not finish). */
  spokenRate(): number | null {
    const seconds = this.pcmBytes / 2 / this.sampleRate;
    return this.engineDone && seconds > 0 ? this.characters / seconds / (this.speed || 1) : null;
  }

  /** Passes the engine's PCM through, counting it. */
  async *counting(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const c of chunks) {
      this.pcmBytes += c.length;
      yield c;
    }
    this.engineDone = true;
  }

  made(bytes: number): void {
    this.encodedMade += bytes;
  }

  delivered(bytes: number): void {
    this.encodedSent += bytes;
  }

  chargedUnits(): number {
    if (this.encodedSent === 0 || this.encodedMade === 0) return 0;
    const madeSeconds = this.pcmBytes / 2 / this.sampleRate;
    const sentSeconds = (this.encodedSent / this.encodedMade) * madeSeconds;
    const expected = this.engineDone
      ? madeSeconds
      : Math.max(madeSeconds, this.characters / (this.rate * (this.speed || 1)));
    if (!(expected > 0)) return 0;
    return Math.min(this.characters, Math.ceil((this.characters * sentSeconds) / expected));
  }
}

/** Voices of every registered TTS engine that can list them without a key (the local engine), or of one. */
export async function listVoices(infra: Infra, provider?: string, language?: string): Promise<Voice[]> {
  const registry = infra.engines.tts;
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
