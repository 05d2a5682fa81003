import { probeMedia } from '../../kernel/media/probe.ts';
import { downloadVendorFile, pollVendor, vendorJson } from '../core/vendor-client.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import type { RenderedVideo } from '../core/rendered-video.ts';
import { LipsyncEngine, type LipsyncRequest } from './types.ts';

interface Prediction {
  id: string;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  output?: string | string[] | null;
  error?: string | null;
}

/**
 * Lip-sync on Replicate (commercial model hosting; platform or stored key): `POST
 * /v1/models/{owner}/{name}/predictions` with `input: {video, audio}` (default model `sync/lipsync-2`), then
 * `GET /v1/predictions/{id}` until `succeeded`; `output` is the MP4 URL. Auth: `Authorization: Bearer`.
 */
export class ReplicateLipsyncEngine extends LipsyncEngine {
  readonly provider = 'replicate';
  readonly label: string;
  readonly capabilities = { selfHosted: false, requiresKey: true };
  private readonly base: string;
  private readonly pollMs: number;
  private readonly model: string;
  constructor(opts: { baseUrl?: string; pollMs?: number; model?: string } = {}) {
    super();
    this.base = (opts.baseUrl ?? 'https://api.replicate.com').replace(/\/$/, '');
    this.pollMs = opts.pollMs ?? 5000;
    this.model = opts.model ?? 'sync/lipsync-2';
    this.label = `replicate.${this.model}`;
  }

  protected async _sync(req: LipsyncRequest): Promise<RenderedVideo> {
    if (!req.apiKey) throw new EngineError(this.provider, 'auth', 'Replicate needs an API token', false);
    if (!req.videoUrl || !req.audioUrl) throw new EngineError(this.provider, 'bad_request', 'inputs need URLs', false);
    const headers = { authorization: `Bearer ${req.apiKey}` };
    const created = await vendorJson<Prediction>(this.provider, `${this.base}/v1/models/${this.model}/predictions`, {
      headers,
      json: { input: { video: req.videoUrl, audio: req.audioUrl } },
      signal: req.signal,
    });
    const url = await pollVendor(
      async () => {
        const p = await vendorJson<Prediction>(
          this.provider,
          `${this.base}/v1/predictions/${encodeURIComponent(created.id)}`,
          {
            headers,
            signal: req.signal,
          },
        );
        if (p.status === 'failed' || p.status === 'canceled') {
          throw new EngineError(this.provider, 'bad_request', `Replicate ${p.status}: ${p.error ?? ''}`, false);
        }
        if (p.status !== 'succeeded') return null;
        const out = Array.isArray(p.output) ? p.output[0] : p.output;
        if (!out) throw new EngineError(this.provider, 'upstream', 'Replicate returned no output', true);
        return out;
      },
      { intervalMs: this.pollMs, signal: req.signal },
    );
    await downloadVendorFile(this.provider, url, req.outPath, req.signal);
    const info = await probeMedia(req.outPath, req.signal);
    return {
      durationSeconds: info.durationSeconds,
      width: info.video?.width ?? 0,
      height: info.video?.height ?? 0,
      provider: this.label,
    };
  }
}
