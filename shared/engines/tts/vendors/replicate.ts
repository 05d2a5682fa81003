import { TtsEngine, type TtsAudio, type TtsCapabilities, type TtsRequest, type Voice } from '../types.ts';
import { EngineError } from '../../../kernel/errors/engine-error.ts';
import { bytesOf, ffmpegDecode } from '../../core/vendor-audio.ts';
import { adapterOptions, clamp, requireKey, vendorModel } from '../../core/vendor-options.ts';
import { vendorFetch, vendorJson } from '../../core/vendor-client.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { stockVoices, type StockVoice } from './stock-voices.ts';

export interface ReplicateTtsOptions {
  /** Default https://api.replicate.com (env REPLICATE_BASE_URL). */
  baseUrl?: string;
  /** `owner/name` (an official model, run by name) or `owner/name:version`. */
  model?: string;
  voice?: string;
  /** Rate the model's output file is decoded to. */
  sampleRate?: number;
  /** Polling interval while the prediction runs, and the overall deadline. */
  pollMs?: number;
  timeoutMs?: number;
}

const DEFAULTS = {
  baseUrl: 'https://api.replicate.com',
  model: 'minimax/speech-02-turbo',
  voice: 'Wise_Woman',
  sampleRate: 24000,
  pollMs: 500,
  timeoutMs: 120_000,
} as const;

const VOICES: StockVoice[] = [
  ['Wise_Woman', 'Wise Woman', 'en', 'female'],
  ['Friendly_Person', 'Friendly Person', 'en', 'neutral'],
  ['Calm_Woman', 'Calm Woman', 'en', 'female'],
  ['Lively_Girl', 'Lively Girl', 'en', 'female'],
  ['Deep_Voice_Man', 'Deep Voice Man', 'en', 'male'],
  ['Casual_Guy', 'Casual Guy', 'en', 'male'],
  ['Patient_Man', 'Patient Man', 'en', 'male'],
  ['Elegant_Man', 'Elegant Man', 'en', 'male'],
];

interface Prediction {
  id: string;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  output?: unknown;
  error?: unknown;
  urls?: { get?: string; cancel?: string };
}

/**
 * Replicate predictions API: create a prediction (Bearer, `Prefer: wait`), poll `urls.get` until it settles,
 * then fetch the output file and decode it with ffmpeg. A model host, so nothing streams before the file exists;
 * aborting cancels the prediction.
 */
export class ReplicateTts extends TtsEngine {
  readonly provider = 'replicate';
  readonly label = 'replicate.tts';
  readonly capabilities: TtsCapabilities = { streaming: false, pitch: false, requiresKey: true };
  private readonly opts: Required<ReplicateTtsOptions>;

  constructor(opts: ReplicateTtsOptions = {}) {
    super();
    this.opts = adapterOptions(this.label, DEFAULTS, opts);
    if (!MODEL.test(this.opts.model)) throw new Error(`${this.label}: model must be owner/name[:version]`);
    if (this.opts.pollMs < 50 || this.opts.timeoutMs < this.opts.pollMs) throw new Error(`${this.label}: bad timing`);
  }

  async voices(): Promise<Voice[]> {
    return stockVoices(this.provider, VOICES);
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const model = vendorModel(req.model, this.opts.model);
    const m = MODEL.exec(model);
    if (!m)
      throw new EngineError(
        this.provider,
        'bad_request',
        `replicate model "${model}" is not owner/name[:version]`,
        false,
      );
    const auth = { authorization: `Bearer ${key}` };
    const input = modelInput(model, req, this.opts.voice);
    const [url, body] = m[2]
      ? [`${this.opts.baseUrl}/v1/predictions`, { version: m[2], input }]
      : [`${this.opts.baseUrl}/v1/models/${m[1]}/predictions`, { input }];
    const deadline = AbortSignal.timeout(this.opts.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
    let p = await vendorJson<Prediction>(this.provider, url, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', prefer: 'wait=10' },
      body: JSON.stringify(body),
      signal,
    });
    try {
      while (p.status === 'starting' || p.status === 'processing') {
        await sleep(this.opts.pollMs, undefined, { signal });
        const get = p.urls?.get ?? `${this.opts.baseUrl}/v1/predictions/${encodeURIComponent(p.id)}`;
        p = await vendorJson<Prediction>(this.provider, get, { headers: auth, signal });
      }
    } catch (e) {
      if (signal.aborted && p.urls?.cancel) {
        // Best effort, once: the prediction stops costing the caller; its failure changes nothing here.
        void vendorFetch(this.provider, p.urls.cancel, { method: 'POST', headers: auth, attempts: 1 }).catch(() => {});
      }
      throw e;
    }
    if (p.status !== 'succeeded') {
      const detail = typeof p.error === 'string' ? p.error : JSON.stringify(p.error ?? p.status);
      throw new EngineError(
        this.provider,
        'bad_request',
        `replicate prediction ${p.status}: ${detail.slice(0, 300)}`,
        false,
      );
    }
    const fileUrl = outputUrl(p.output);
    if (!fileUrl) throw new EngineError(this.provider, 'upstream', 'replicate prediction has no audio output', false);
    const file = await vendorFetch(this.provider, fileUrl, { signal: req.signal });
    return {
      sampleRate: this.opts.sampleRate,
      chunks: ffmpegDecode(this.provider, bytesOf(this.provider, file.body), this.opts.sampleRate, req.signal),
    };
  }
}

const MODEL = /^([\w.-]+\/[\w.-]+)(?::([0-9a-f]{16,}))?$/;

/** Input fields differ per model family; these are the families documented as TTS models on Replicate. */
function modelInput(model: string, req: TtsRequest, defaultVoice: string): Record<string, unknown> {
  const voice = req.voiceId && req.voiceId !== 'default' ? req.voiceId : undefined;
  if (model.startsWith('minimax/')) {
    const input: Record<string, unknown> = { text: req.text, voice_id: voice ?? defaultVoice };
    if (req.speed !== 1) input.speed = clamp(req.speed, 0.5, 2);
    if (req.pitch !== 1) input.pitch = Math.round(clamp(12 * Math.log2(req.pitch), -12, 12));
    return input;
  }
  const input: Record<string, unknown> = { text: req.text };
  if (voice) input.voice = voice;
  if (req.speed !== 1) input.speed = req.speed;
  return input;
}

/** A prediction's output is a file URL, or a list of them (take the first). */
function outputUrl(output: unknown): string | null {
  if (typeof output === 'string') return output;
  if (Array.isArray(output) && typeof output[0] === 'string') return output[0];
  if (output && typeof output === 'object' && typeof (output as { audio?: unknown }).audio === 'string') {
    return (output as { audio: string }).audio;
  }
  return null;
}
