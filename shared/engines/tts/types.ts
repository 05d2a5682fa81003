import { EngineError, isEngineError } from '../../kernel/errors/engine-error.ts';
import type { WorkOwner } from '../core/fair-queue.ts';
import { engineLatency, engineTtfb } from '../core/metrics.ts';

export interface Voice {
  id: string;
  name: string;
  language: string;
  gender: 'male' | 'female' | 'neutral';
  provider: string;
}

/** A voice to synthesize with, and the model when the voice alone does not pick the language (ElevenLabs). */
export interface SpokenVoice {
  voiceId: string;
  model?: string;
}

/** `es-MX` → `es`. */
export function primaryLanguage(tag: string): string {
  return tag.toLowerCase().split(/[-_]/)[0]!;
}

export interface TtsRequest {
  text: string;
  voiceId: string;
  /** 0.25-4 (the API bounds each endpoint further); 1 = natural rate. */
  speed: number;
  /** 0.5-2; 1 = the voice's natural pitch. Engines without pitch control ignore it (see capabilities). */
  pitch: number;
  model?: string | null;
  language?: string;
  /** The resolved provider key (caller header, stored key or platform key); absent for local engines. */
  apiKey?: string;
  /**
   * `interactive` (default): someone is waiting for the first audio. `background`: audio that is needed later (the
   * next sentence of a reply already being spoken); local engines run it at a lower CPU priority so that other
   * calls' first audio goes first. Vendor engines ignore it.
   */
  priority?: 'interactive' | 'background';
  /**
   * The rate the audio will be played at (8000 on a phone line). Engines that can produce it natively do, which
   * spares resampling every chunk; others answer at their own rate (`TtsAudio.sampleRate` says which).
   */
  sampleRate?: number;
  /**
   * Who the audio is for: the developer, and whether a live call waits for it. Local engines queue their work by
   * it (live calls first, then fair across developers: core/fair-queue.ts); vendor engines ignore it.
   */
  owner?: WorkOwner;
  signal?: AbortSignal;
}

/** Synthesized speech: mono PCM s16le chunks in the order made, at `sampleRate`. */
export interface TtsAudio {
  sampleRate: number;
  chunks: AsyncIterable<Buffer>;
}

export interface TtsCapabilities {
  /** Audio arrives while synthesis is still running. */
  streaming: boolean;
  pitch: boolean;
  /** Needs a provider key (resolve it with resolveProviderKey before calling). */
  requiresKey: boolean;
}

/**
 * Base of every TTS adapter: the shared work (latency and time-to-first-byte metrics, error normalisation)
 * lives here; adapters implement `_synthesize`. `label` names the adapter honestly, e.g. `flite.tts`.
 */
export abstract class TtsEngine {
  abstract readonly provider: string;
  abstract readonly label: string;
  abstract readonly capabilities: TtsCapabilities;
  abstract voices(): Promise<Voice[]>;
  protected abstract _synthesize(req: TtsRequest): Promise<TtsAudio>;

  /**
   * Throws an `invalid_input` EngineError (a 400 on `param`) when this engine refuses the text before any work: the
   * local engine refuses a word it would spell out letter by letter (speakable.ts). Callers check before reserving
   * credits; `synthesize` checks again. Vendor engines take any text the API accepts.
   */
  checkText(_text: string, _param: string): void {}

  /**
   * The voice (and model, where the vendor's multilingual speech is a model) to speak `language` with when the
   * caller names none, e.g. a dub's `voice_id` omitted ("a multilingual voice on the same provider"). By default a
   * stock voice of that language when the vendor lists one, else the vendor's default voice: most vendors' default
   * voices speak the text's language (OpenAI, Cartesia sonic). Adapters whose default is not multilingual say so.
   */
  async multilingualVoice(language: string): Promise<SpokenVoice> {
    const lang = primaryLanguage(language);
    const match = (await this.voices()).find((v) => primaryLanguage(v.language) === lang);
    return { voiceId: match?.id ?? 'default' };
  }

  async synthesize(req: TtsRequest): Promise<TtsAudio> {
    const started = performance.now();
    const done = engineLatency.startTimer({ capability: 'tts', provider: this.provider });
    let audio: TtsAudio;
    try {
      audio = await this._synthesize(req);
    } catch (e) {
      done({ outcome: 'error' });
      throw isEngineError(e) ? e : EngineError.network(this.provider, e);
    }
    const provider = this.provider;
    async function* measured(): AsyncGenerator<Buffer> {
      let first = true;
      try {
        for await (const chunk of audio.chunks) {
          if (first) {
            engineTtfb.observe({ capability: 'tts', provider }, (performance.now() - started) / 1000);
            first = false;
          }
          yield chunk;
        }
        done({ outcome: 'ok' });
      } catch (e) {
        done({ outcome: 'error' });
        throw isEngineError(e) ? e : EngineError.network(provider, e);
      }
    }
    return { sampleRate: audio.sampleRate, chunks: measured() };
  }
}
