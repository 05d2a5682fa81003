import type { AnalyzeSections } from '../../contracts/video.ts';
import type { MediaInfo } from '../../kernel/media/probe.ts';
import { timed } from '../core/metrics.ts';
import type { VideoEngineCapabilities } from '../core/rendered-video.ts';

/** Transcribes a local media file with the platform's local speech engine (timed segments). */
export type Transcriber = (
  path: string,
  signal: AbortSignal,
) => Promise<{ text: string; language: string; segments: { start: number; end: number; text: string }[] }>;

/** What an analysis engine produces itself; `embed` is done by the job with the embeddings engine. */
export type AnalysisTask = 'transcribe' | 'scenes';

export interface AnalysisRequest {
  /** The input, fetched into the job's work folder and probed. */
  videoPath: string;
  info: MediaInfo;
  /** A presigned URL of the same input, for engines that run elsewhere (made on demand). */
  videoUrl(): Promise<string>;
  tasks: AnalysisTask[];
  /** Scratch folder of the job (removed after it). */
  workDir: string;
  apiKey?: string;
  /**
   * How the platform transcribes a local media file (the speech domain's transcription with the local engine):
   * handed in by the job, so an analysis engine needs no domain to run `transcribe`.
   */
  transcribe: Transcriber;
  signal: AbortSignal;
  /** Fraction 0–1 of the engine's own work. */
  onProgress(fraction: number): Promise<void> | void;
}

export interface AnalysisResult {
  sections: AnalyzeSections;
  /** What produced it, as the job's result.provider shows it (e.g. `twelvelabs.pegasus`). */
  provider: string;
}

/** Video understanding: a video → transcript and described scenes. Adapters implement `_analyze`. */
export abstract class AnalysisEngine {
  abstract readonly provider: string;
  abstract readonly label: string;
  abstract readonly capabilities: VideoEngineCapabilities;
  protected abstract _analyze(req: AnalysisRequest): Promise<AnalysisResult>;

  analyze(req: AnalysisRequest): Promise<AnalysisResult> {
    return timed('analysis', this.provider, () => this._analyze(req));
  }
}
