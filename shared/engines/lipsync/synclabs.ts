import { probeMedia } from '../../kernel/media/probe.ts';
import { downloadVendorFile, pollVendor, vendorJson } from '../core/vendor-client.ts';
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
export class SyncLabsLipsyncEngine extends LipsyncEngine {
  readonly provider = 'synclabs';
  readonly label = 'synclabs.lipsync-2';
  readonly capabilities = { selfHosted: false, requiresKey: true };
  private readonly base: string;
  constructor(opts: { baseUrl?: string; pollMs?: number; model?: string } = {}) {
    super();
    this.base = (opts.baseUrl ?? 'https://api.sync.so').replace(/\/$/, '');
    this.pollMs = opts.pollMs ?? 5000;
    this.model = opts.model ?? 'lipsync-2';
  }
  private readonly pollMs: number;
  private readonly model: string;

  protected async _sync(req: LipsyncRequest): Promise<RenderedVideo> {
    if (!req.apiKey) throw new EngineError(this.provider, 'auth', 'Sync Labs needs an API key', false);
    if (!req.videoUrl || !req.audioUrl) throw new EngineError(this.provider, 'bad_request', 'inputs need URLs', false);
    const headers = { 'x-api-key': req.apiKey };
    const created = await vendorJson<Generation>(this.provider, `${this.base}/v2/generate`, {
      headers,
      json: {
        model: this.model,
        input: [
          { type: 'video', url: req.videoUrl },
          { type: 'audio', url: req.audioUrl },
        ],
        options: { sync_mode: 'cut_off', output_format: 'mp4' },
      },
      signal: req.signal,
    });
    const url = await pollVendor(
      async () => {
        const g = await vendorJson<Generation>(
          this.provider,
          `${this.base}/v2/generate/${encodeURIComponent(created.id)}`,
          {
            headers,
            signal: req.signal,
          },
        );
        if (g.status === 'FAILED' || g.status === 'REJECTED' || g.status === 'CANCELED') {
          throw new EngineError(this.provider, 'bad_request', `Sync Labs ${g.status}: ${g.error ?? ''}`, false);
        }
        return g.status === 'COMPLETED' && g.outputUrl ? g.outputUrl : null;
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
