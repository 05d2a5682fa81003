import type { AnalyzeSections } from '../../contracts/video.ts';
import { onAsyncVideoVendor } from '../core/async-video.ts';
import { vendorJson } from '../core/vendor-client.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { AnalysisEngine, type AnalysisRequest, type AnalysisResult } from './types.ts';

interface Task {
  _id: string;
  video_id?: string;
  status: 'validating' | 'pending' | 'queued' | 'indexing' | 'ready' | 'failed';
}
interface Chapter {
  chapter_number?: number;
  start_sec?: number;
  end_sec?: number;
  start?: number;
  end?: number;
  chapter_title?: string;
  chapter_summary?: string;
}

/**
 * Twelve Labs (commercial, the caller's own key), API v1.3: the video is indexed from its presigned URL into the
 * developer's `vap-video-analyze` index (created on first use; Pegasus, visual + audio) with `POST /tasks`
 * (multipart `index_id`, `video_url`), polled until `ready`; `scenes` come from `POST /summarize` (type
 * `chapter`: start, end, title, summary), `transcribe` from the video's transcription
 * (`GET /indexes/{index}/videos/{video}?transcription=true`). Auth: `x-api-key`.
 */
export class TwelveLabsAnalysisEngine extends onAsyncVideoVendor(AnalysisEngine, 'twelvelabs') {
  readonly label = 'twelvelabs.pegasus';
  private readonly base = `${this.vendor.base}/v1.3`;

  private async indexId(headers: Record<string, string>, signal: AbortSignal): Promise<string> {
    const name = 'vap-video-analyze';
    const list = await vendorJson<{ data: { _id: string; index_name: string }[] }>(
      this.provider,
      `${this.base}/indexes?index_name=${name}`,
      { headers, signal },
    );
    const found = list.data.find((i) => i.index_name === name);
    if (found) return found._id;
    const created = await vendorJson<{ _id: string }>(this.provider, `${this.base}/indexes`, {
      headers,
      json: { index_name: name, models: [{ model_name: 'pegasus1.2', model_options: ['visual', 'audio'] }] },
      signal,
    });
    return created._id;
  }

  protected async _analyze(req: AnalysisRequest): Promise<AnalysisResult> {
    if (!req.apiKey) throw new EngineError(this.provider, 'auth', 'Twelve Labs needs an API key', false);
    const headers = { 'x-api-key': req.apiKey };
    const index = await this.indexId(headers, req.signal);
    const form = new FormData();
    form.set('index_id', index);
    form.set('video_url', await req.videoUrl());
    const task = await vendorJson<Task>(this.provider, `${this.base}/tasks`, {
      headers,
      body: form,
      signal: req.signal,
    });
    const videoId = await this.vendor.poll<Task>(
      `${this.base}/tasks/${encodeURIComponent(task._id)}`,
      (t) => {
        if (t.status === 'failed')
          throw new EngineError(this.provider, 'bad_request', 'Twelve Labs could not index the video', false);
        return t.status === 'ready' && t.video_id ? t.video_id : null;
      },
      { headers, signal: req.signal, onWait: (n) => void req.onProgress(Math.min(0.6, 0.05 * n)) },
    );
    const out: AnalyzeSections = {};
    if (req.tasks.includes('scenes')) {
      const s = await vendorJson<{ chapters?: Chapter[] }>(this.provider, `${this.base}/summarize`, {
        headers,
        json: { video_id: videoId, type: 'chapter' },
        signal: req.signal,
      });
      out.scenes = (s.chapters ?? []).map((c) => ({
        start: c.start_sec ?? c.start ?? 0,
        end: c.end_sec ?? c.end ?? 0,
        description: [c.chapter_title, c.chapter_summary].filter(Boolean).join(': '),
        ocr_text: '',
        face_count: -1,
        motion: -1,
        dominant_color: '',
      }));
    }
    if (req.tasks.includes('transcribe')) {
      const v = await vendorJson<{ transcription?: { start: number; end: number; value: string }[] }>(
        this.provider,
        `${this.base}/indexes/${encodeURIComponent(index)}/videos/${encodeURIComponent(videoId)}?transcription=true`,
        { headers, signal: req.signal },
      );
      const segments = (v.transcription ?? []).map((t) => ({ start: t.start, end: t.end, text: t.value }));
      out.transcript = { text: segments.map((s) => s.text).join(' '), language: '', segments };
    }
    return { sections: out, provider: this.label };
  }
}
