import type { AnalyzeSections } from '../../contracts/video.ts';
import { callModelServer, onModelServer } from '../core/model-server.ts';
import { AnalysisEngine, type AnalysisRequest, type AnalysisResult } from './types.ts';

/** A self-hosted analysis model behind the model-server contract: it answers the analyze sections as JSON. */
export class ModelServerAnalysisEngine extends onModelServer(AnalysisEngine) {
  protected async _analyze(req: AnalysisRequest): Promise<AnalysisResult> {
    const { json } = await callModelServer(
      this.server,
      { inputs: { video_url: await req.videoUrl() }, params: { tasks: req.tasks } },
      null,
      req.signal,
    );
    return { sections: json as AnalyzeSections, provider: this.provider };
  }
}
