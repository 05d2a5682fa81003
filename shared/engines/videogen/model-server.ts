import { renderOnModelServer, onModelServer } from '../core/model-server.ts';
import type { RenderedVideo } from '../core/rendered-video.ts';
import { VideoGenEngine, type GenerateRequest } from './types.ts';

/** A self-hosted text-to-video model (HunyuanVideo, Wan, LTX-Video…) behind the model-server contract. */
export class ModelServerVideoGenEngine extends onModelServer(VideoGenEngine) {
  protected async _generate(req: GenerateRequest): Promise<RenderedVideo> {
    return renderOnModelServer(
      this.server,
      {
        inputs: {},
        params: {
          prompt: req.prompt,
          negative_prompt: req.negativePrompt,
          duration_seconds: req.durationSeconds,
          width: req.width,
          height: req.height,
          fps: req.fps,
        },
      },
      req.outPath,
      req.signal,
      { width: req.width, height: req.height },
    );
  }
}
