import type { AnalyzeVideoBody } from '../../../contracts/video.ts';
import type { AnalysisTask } from '../../../engines/analysis/types.ts';
import { ingestDocument } from '../../rag/ingest.ts';
import type { Infra } from '../../../platform/infra.ts';
import { fetchInput } from '../inputs.ts';
import { transcribeMedia } from '../speech.ts';
import type { JobOutcome, StepContext } from '../lifecycle.ts';
import { resolveJobVideoKey } from '../vendor-keys.ts';
import { presign } from './outputs.ts';

/**
 * Analyze: the job's analysis engine (local, Twelve Labs or a model server; shared/engines/analysis) does
 * `transcribe` and `scenes`; `embed` (the transcript segments and scene descriptions embedded with the
 * embeddings engine, stored into the collection given by collectionId) is done here for every engine.
 * Charged per input second.
 */
export async function runAnalyze(infra: Infra, s: StepContext): Promise<JobOutcome> {
  const req = s.job.request as unknown as AnalyzeVideoBody;
  const video = await fetchInput(infra, s.job, 'video_url', req.video_url, 'video', s.workDir, s.signal);
  await s.progress(0.1);
  const engine = infra.engines.video.analysis.get(s.job.provider);
  const key = engine.capabilities.requiresKey ? await resolveJobVideoKey(infra, s.job, engine.provider) : null;
  const { sections, provider } = await engine.analyze({
    videoPath: video.path,
    info: video.info,
    videoUrl: () => presign(infra, video.key),
    tasks: req.tasks.filter((t): t is AnalysisTask => t !== 'embed'),
    workDir: s.workDir,
    apiKey: key?.key,
    // The local engine's transcript: the speech domain's transcription with the local engine, not charged apart.
    transcribe: (path, signal) =>
      transcribeMedia(infra, { job: null, provider: 'default', language: 'en', path }, signal),
    signal: s.signal,
    onProgress: (f) => s.progress(0.1 + 0.7 * f),
  });
  const duration = video.info.durationSeconds;
  if (req.tasks.includes('embed')) {
    const chunks = [
      ...(sections.transcript?.segments ?? []).map((x) => ({ start: x.start, end: x.end, text: x.text })),
      ...(sections.scenes ?? []).map((x) => ({ start: x.start, end: x.end, text: x.description })),
    ].filter((c) => c.text.trim());
    const embedder = infra.engines.embeddings.get('default');
    const vectors = await embedder.embed(
      chunks.map((c) => c.text),
      { signal: s.signal },
    );
    sections.embeddings = {
      provider: embedder.label,
      dimensions: embedder.dimension,
      chunks: chunks.map((c, i) => ({ ...c, embedding: Array.from(vectors[i]!, (v) => Math.round(v * 1e5) / 1e5) })),
    };
    if (req.collectionId && chunks.length) {
      await ingestDocument(
        infra,
        req.collectionId,
        {
          content: chunks.map((c) => `[${c.start.toFixed(1)}-${c.end.toFixed(1)} s] ${c.text}`).join('\n'),
          contentType: 'text',
          metadata: { source: 'video.analyze', video_job_id: s.job.id },
        },
        { developerId: s.job.owner_id, requestId: s.job.id, signal: s.signal },
      );
      sections.embeddings.collection_id = req.collectionId;
    }
  }
  return {
    result: {
      duration_seconds: duration,
      width: video.info.video?.width,
      height: video.info.video?.height,
      provider,
      ...sections,
    },
    units: duration,
  };
}
