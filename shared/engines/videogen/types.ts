import { engineLatency } from '../core/metrics.ts';
import type { RenderedVideo, VideoEngineCapabilities } from '../core/rendered-video.ts';

export interface GenerateRequest {
  prompt: string;
  negativePrompt?: string;
  durationSeconds: number;
  width: number;
  height: number;
  fps: number;
  outPath: string;
  apiKey?: string;
  signal: AbortSignal;
  onProgress(fraction: number): Promise<void> | void;
}

/** Text-to-video engine. Adapters implement `_generate`, writing an MP4 to `outPath`. */
export abstract class VideoGenEngine {
  abstract readonly provider: string;
  abstract readonly label: string;
  abstract readonly capabilities: VideoEngineCapabilities;
  protected abstract _generate(req: GenerateRequest): Promise<RenderedVideo>;

  async generate(req: GenerateRequest): Promise<RenderedVideo> {
    const end = engineLatency.startTimer({ capability: 'videogen', provider: this.provider });
    try {
      const out = await this._generate(req);
      end({ outcome: 'ok' });
      return out;
    } catch (e) {
      end({ outcome: 'error' });
      throw e;
    }
  }
}
