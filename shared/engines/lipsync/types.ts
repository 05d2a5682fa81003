import { engineLatency } from '../core/metrics.ts';
import type { RenderedVideo, VideoEngineCapabilities } from '../core/rendered-video.ts';

export interface LipsyncRequest {
  videoPath: string;
  audioPath: string;
  outPath: string;
  /** Longest side of the output (default engine), and output frame rate. */
  size: number;
  fps: number;
  /** Presigned URLs of the inputs, for engines that run elsewhere. */
  videoUrl?: string;
  audioUrl?: string;
  apiKey?: string;
  signal: AbortSignal;
  onProgress(fraction: number): Promise<void> | void;
}

/** Lip-sync engine: a video of a face + replacement speech → the video with the mouth following the speech. */
export abstract class LipsyncEngine {
  abstract readonly provider: string;
  abstract readonly label: string;
  abstract readonly capabilities: VideoEngineCapabilities;
  protected abstract _sync(req: LipsyncRequest): Promise<RenderedVideo>;

  async sync(req: LipsyncRequest): Promise<RenderedVideo> {
    const end = engineLatency.startTimer({ capability: 'lipsync', provider: this.provider });
    try {
      const out = await this._sync(req);
      end({ outcome: 'ok' });
      return out;
    } catch (e) {
      end({ outcome: 'error' });
      throw e;
    }
  }
}
