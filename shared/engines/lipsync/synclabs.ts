import { onAsyncVideoVendor, type AsyncVideoVendorOptions } from '../core/async-video.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import type { RenderedVideo } from '../core/rendered-video.ts';
import { LipsyncEngine, type LipsyncRequest } from './types.ts';

interface Generation {
  id: string;
  status: 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED' | 'REJECTED' | 'CANCELED';
  outputUrl?: string | null;
  error?: string | null;
}

/**
 * Sync Labs (commercial, the caller's own key): `POST /v2/generate` with a video and an audio input by URL
 * (model `lipsync-2`), then `GET /v2/generate/{id}` until `COMPLETED`; the output is downloaded. Auth: `x-api-key`.
 */
export class SyncLabsLipsyncEngine extends onAsyncVideoVendor(LipsyncEngine, 'synclabs') {
  readonly label = 'synclabs.lipsync-2';
  private readonly model: string;
  constructor(opts: AsyncVideoVendorOptions & { model?: string } = {}) {
    super(opts);
    this.model = opts.model ?? 'lipsync-2';
  }

  protected async _sync(req: LipsyncRequest): Promise<RenderedVideo> {
    if (!req.apiKey) throw new EngineError(this.provider, 'auth', 'Sync Labs needs an API key', false);
    if (!req.videoUrl || !req.audioUrl) throw new EngineError(this.provider, 'bad_request', 'inputs need URLs', false);
    const headers = { 'x-api-key': req.apiKey };
    return this.vendor.render<Generation>({
      call: { headers, signal: req.signal },
      submitPath: '/v2/generate',
      submit: {
        model: this.model,
        input: [
          { type: 'video', url: req.videoUrl },
          { type: 'audio', url: req.audioUrl },
        ],
        options: { sync_mode: 'cut_off', output_format: 'mp4' },
      },
      statusPath: (id) => `/v2/generate/${id}`,
      outcome: (g) => {
        if (g.status === 'FAILED' || g.status === 'REJECTED' || g.status === 'CANCELED') {
          throw new EngineError(this.provider, 'bad_request', `Sync Labs ${g.status}: ${g.error ?? ''}`, false);
        }
        return g.status === 'COMPLETED' && g.outputUrl ? g.outputUrl : null;
      },
      out: { outPath: req.outPath, label: this.label, size: { width: 0, height: 0 } },
    });
  }
}
