import { probeMedia } from '../../kernel/media/probe.ts';
import { downloadVendorFile, pollVendor, vendorJson } from '../core/vendor-client.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import type { RenderedVideo } from '../core/rendered-video.ts';
import { VideoGenEngine, type GenerateRequest } from './types.ts';

interface LumaGeneration {
  id: string;
  state: 'queued' | 'dreaming' | 'completed' | 'failed';
  failure_reason?: string | null;
  assets?: { video?: string | null } | null;
}

/** Nearest aspect ratio Luma accepts. */
function aspect(w: number, h: number): string {
  const options: [string, number][] = [
    ['1:1', 1],
    ['16:9', 16 / 9],
    ['9:16', 9 / 16],
    ['4:3', 4 / 3],
    ['3:4', 3 / 4],
    ['21:9', 21 / 9],
    ['9:21', 9 / 21],
  ];
  const r = w / h;
  return options.reduce((a, b) => (Math.abs(b[1] - r) < Math.abs(a[1] - r) ? b : a))[0];
}

/**
 * Luma Dream Machine (commercial; platform key or the caller's stored key): `POST /dream-machine/v1/generations`
 * (model `ray-2`, `5s` or `9s`, nearest aspect ratio, 540p/720p/1080p), then `GET …/generations/{id}` until
 * `completed`; `assets.video` is downloaded. Auth: `Authorization: Bearer`.
 */
export class LumaVideoGenEngine extends VideoGenEngine {
  readonly provider = 'luma';
  readonly label = 'luma.ray-2';
  readonly capabilities = { selfHosted: false, requiresKey: true };
  private readonly base: string;
  private readonly pollMs: number;
  constructor(opts: { baseUrl?: string; pollMs?: number } = {}) {
    super();
    this.base = (opts.baseUrl ?? 'https://api.lumalabs.ai').replace(/\/$/, '');
    this.pollMs = opts.pollMs ?? 5000;
  }

  protected async _generate(req: GenerateRequest): Promise<RenderedVideo> {
    if (!req.apiKey) throw new EngineError(this.provider, 'auth', 'Luma needs an API key', false);
    const headers = { authorization: `Bearer ${req.apiKey}`, accept: 'application/json' };
    const short = Math.min(req.width, req.height);
    const created = await vendorJson<LumaGeneration>(this.provider, `${this.base}/dream-machine/v1/generations`, {
      headers,
      json: {
        prompt: req.negativePrompt ? `${req.prompt} (avoid: ${req.negativePrompt})` : req.prompt,
        model: 'ray-2',
        duration: req.durationSeconds > 5 ? '9s' : '5s',
        aspect_ratio: aspect(req.width, req.height),
        resolution: short >= 1080 ? '1080p' : short >= 720 ? '720p' : '540p',
      },
      signal: req.signal,
    });
    const url = await pollVendor(
      async () => {
        const g = await vendorJson<LumaGeneration>(
          this.provider,
          `${this.base}/dream-machine/v1/generations/${encodeURIComponent(created.id)}`,
          {
            headers,
            signal: req.signal,
          },
        );
        if (g.state === 'failed')
          throw new EngineError(this.provider, 'bad_request', `Luma failed: ${g.failure_reason ?? ''}`, false);
        return g.state === 'completed' && g.assets?.video ? g.assets.video : null;
      },
      { intervalMs: this.pollMs, signal: req.signal },
    );
    await downloadVendorFile(this.provider, url, req.outPath, req.signal);
    const info = await probeMedia(req.outPath, req.signal);
    return {
      durationSeconds: info.durationSeconds,
      width: info.video?.width ?? req.width,
      height: info.video?.height ?? req.height,
      provider: this.label,
    };
  }
}
