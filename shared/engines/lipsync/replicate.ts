import { onAsyncVideoVendor, type AsyncVideoVendorOptions } from '../core/async-video.ts';
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
export class ReplicateLipsyncEngine extends onAsyncVideoVendor(LipsyncEngine, 'replicate') {
  readonly label: string;
  private readonly model: string;
  constructor(opts: AsyncVideoVendorOptions & { model?: string } = {}) {
    super(opts);
    this.model = opts.model ?? 'sync/lipsync-2';
    this.label = `replicate.${this.model}`;
  }

  protected async _sync(req: LipsyncRequest): Promise<RenderedVideo> {
    if (!req.apiKey) throw new EngineError(this.provider, 'auth', 'Replicate needs an API token', false);
    if (!req.videoUrl || !req.audioUrl) throw new EngineError(this.provider, 'bad_request', 'inputs need URLs', false);
    const headers = { authorization: `Bearer ${req.apiKey}` };
    return this.vendor.render<Prediction>({
      call: { headers, signal: req.signal },
      submitPath: `/v1/models/${this.model}/predictions`,
      submit: { input: { video: req.videoUrl, audio: req.audioUrl } },
      statusPath: (id) => `/v1/predictions/${id}`,
      outcome: (p) => {
        if (p.status === 'failed' || p.status === 'canceled') {
          throw new EngineError(this.provider, 'bad_request', `Replicate ${p.status}: ${p.error ?? ''}`, false);
        }
        if (p.status !== 'succeeded') return null;
        const out = Array.isArray(p.output) ? p.output[0] : p.output;
        if (!out) throw new EngineError(this.provider, 'upstream', 'Replicate returned no output', true);
        return out;
      },
      out: { outPath: req.outPath, label: this.label, size: { width: 0, height: 0 } },
    });
  }
}
