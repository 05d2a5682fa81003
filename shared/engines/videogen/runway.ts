import { onAsyncVideoVendor } from '../core/async-video.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import type { RenderedVideo } from '../core/rendered-video.ts';
import { VideoGenEngine, type GenerateRequest } from './types.ts';

interface RunwayTask {
  id: string;
  status: 'PENDING' | 'THROTTLED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  output?: string[];
  failure?: string;
}

/**
 * Runway (commercial; platform or stored key): `POST /v1/text_to_video` (`X-Runway-Version: 2024-11-06`, model
 * `veo3.1_fast`, `promptText`, `ratio` 1280:720 or 720:1280, duration 4/6/8 s), then `GET /v1/tasks/{id}` until
 * `SUCCEEDED`; `output[0]` is downloaded. Auth: `Authorization: Bearer`.
 */
export class RunwayVideoGenEngine extends onAsyncVideoVendor(VideoGenEngine, 'runway') {
  readonly label = 'runway.veo3.1_fast';

  protected async _generate(req: GenerateRequest): Promise<RenderedVideo> {
    if (!req.apiKey) throw new EngineError(this.provider, 'auth', 'Runway needs an API key', false);
    const headers = { authorization: `Bearer ${req.apiKey}`, 'x-runway-version': '2024-11-06' };
    const duration = [4, 6, 8].reduce((a, b) =>
      Math.abs(b - req.durationSeconds) < Math.abs(a - req.durationSeconds) ? b : a,
    );
    return this.vendor.render<RunwayTask>({
      call: { headers, signal: req.signal },
      submitPath: '/v1/text_to_video',
      submit: {
        model: 'veo3.1_fast',
        promptText: req.prompt.slice(0, 1000),
        ratio: req.width >= req.height ? '1280:720' : '720:1280',
        duration,
      },
      statusPath: (id) => `/v1/tasks/${id}`,
      outcome: (t) => {
        if (t.status === 'FAILED' || t.status === 'CANCELLED') {
          throw new EngineError(this.provider, 'bad_request', `Runway ${t.status}: ${t.failure ?? ''}`, false);
        }
        return t.status === 'SUCCEEDED' && t.output?.[0] ? t.output[0] : null;
      },
      out: { outPath: req.outPath, label: this.label, size: req },
    });
  }
}
