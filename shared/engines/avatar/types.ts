import { engineLatency } from '../core/metrics.ts';
import type { RenderedVideo, VideoEngineCapabilities } from '../core/rendered-video.ts';

export interface AvatarRequest {
  /** Local paths inside the job's work folder (inputs already fetched into S3 and probed). */
  imagePath: string;
  audioPath: string;
  outPath: string;
  /** Longest side of the output in pixels, and frame rate (default engine; remote engines may ignore). */
  size: number;
  fps: number;
  /** Presigned URLs of the same inputs, for engines that run elsewhere (model servers, vendors). */
  imageUrl?: string;
  audioUrl?: string;
  apiKey?: string;
  signal: AbortSignal;
  onProgress(fraction: number): Promise<void> | void;
}

/** Talking-head engine: still image + speech → video. Adapters implement `_render`. */
export abstract class AvatarEngine {
  abstract readonly provider: string;
  abstract readonly label: string;
  abstract readonly capabilities: VideoEngineCapabilities;
  protected abstract _render(req: AvatarRequest): Promise<RenderedVideo>;

  async render(req: AvatarRequest): Promise<RenderedVideo> {
    const end = engineLatency.startTimer({ capability: 'avatar', provider: this.provider });
    try {
      const out = await this._render(req);
      end({ outcome: 'ok' });
      return out;
    } catch (e) {
      end({ outcome: 'error' });
      throw e;
    }
  }
}
