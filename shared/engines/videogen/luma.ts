import { onAsyncVideoVendor } from '../core/async-video.ts';
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
export class LumaVideoGenEngine extends onAsyncVideoVendor(VideoGenEngine, 'luma') {
  readonly label = 'luma.ray-2';

  protected async _generate(req: GenerateRequest): Promise<RenderedVideo> {
    if (!req.apiKey) throw new EngineError(this.provider, 'auth', 'Luma needs an API key', false);
    const headers = { authorization: `Bearer ${req.apiKey}`, accept: 'application/json' };
    const short = Math.min(req.width, req.height);
    return this.vendor.render<LumaGeneration>({
      call: { headers, signal: req.signal },
      submitPath: '/dream-machine/v1/generations',
      submit: {
        prompt: req.negativePrompt ? `${req.prompt} (avoid: ${req.negativePrompt})` : req.prompt,
        model: 'ray-2',
        duration: req.durationSeconds > 5 ? '9s' : '5s',
        aspect_ratio: aspect(req.width, req.height),
        resolution: short >= 1080 ? '1080p' : short >= 720 ? '720p' : '540p',
      },
      statusPath: (id) => `/dream-machine/v1/generations/${id}`,
      outcome: (g) => {
        if (g.state === 'failed')
          throw new EngineError(this.provider, 'bad_request', `Luma failed: ${g.failure_reason ?? ''}`, false);
        return g.state === 'completed' && g.assets?.video ? g.assets.video : null;
      },
      out: { outPath: req.outPath, label: this.label, size: req },
    });
  }
}
