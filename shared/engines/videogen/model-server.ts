import { callModelServer, type ModelServer } from '../../video/model-server.ts';
import { probeMedia } from '../../video/probe.ts';
import type { RenderedVideo } from '../avatar/types.ts';
import { VideoGenEngine, type GenerateRequest } from './types.ts';

/** A self-hosted text-to-video model (HunyuanVideo, Wan, LTX-Video…) behind the model-server contract. */
export class ModelServerVideoGenEngine extends VideoGenEngine {
  readonly label: string;
  readonly capabilities = { selfHosted: true, requiresKey: false };
  constructor(private readonly server: ModelServer) {
    super();
    this.label = `${server.provider}:model-server`;
  }
  get provider(): string {
    return this.server.provider;
  }

  protected async _generate(req: GenerateRequest): Promise<RenderedVideo> {
    await callModelServer(
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
    );
    const info = await probeMedia(req.outPath, req.signal);
    return {
      durationSeconds: info.durationSeconds,
      width: info.video?.width ?? req.width,
      height: info.video?.height ?? req.height,
      provider: this.provider,
    };
  }
}
