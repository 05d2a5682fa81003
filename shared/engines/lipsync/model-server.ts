import { renderOnModelServer, onModelServer } from '../core/model-server.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import type { RenderedVideo } from '../core/rendered-video.ts';
import { LipsyncEngine, type LipsyncRequest } from './types.ts';

/** A self-hosted neural lip-sync engine (Wav2Lip, MuseTalk, LatentSync…) behind the model-server contract. */
export class ModelServerLipsyncEngine extends onModelServer(LipsyncEngine) {
  protected async _sync(req: LipsyncRequest): Promise<RenderedVideo> {
    if (!req.videoUrl || !req.audioUrl) throw new EngineError(this.provider, 'bad_request', 'inputs need URLs', false);
    return renderOnModelServer(
      this.server,
      { inputs: { video_url: req.videoUrl, audio_url: req.audioUrl }, params: { fps: req.fps } },
      req.outPath,
      req.signal,
    );
  }
}
