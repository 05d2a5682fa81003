import { renderOnModelServer, onModelServer } from '../core/model-server.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { AvatarEngine, type AvatarRequest } from './types.ts';
import type { RenderedVideo } from '../core/rendered-video.ts';

/** A self-hosted neural avatar engine on a GPU node, behind the model-server contract (docs/video.md). */
export class ModelServerAvatarEngine extends onModelServer(AvatarEngine) {
  protected async _render(req: AvatarRequest): Promise<RenderedVideo> {
    if (!req.imageUrl || !req.audioUrl) throw new EngineError(this.provider, 'bad_request', 'inputs need URLs', false);
    return renderOnModelServer(
      this.server,
      { inputs: { image_url: req.imageUrl, audio_url: req.audioUrl }, params: { size: req.size, fps: req.fps } },
      req.outPath,
      req.signal,
    );
  }
}
