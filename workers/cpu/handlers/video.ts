import type { JobsOn } from '../../../shared/kernel/queue/catalog.ts';
import type { HandlerMap } from '../../../shared/kernel/queue/worker-runner.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import type { videoJobs } from '../../../shared/kernel/queue/jobs/video.ts';
import { dubMux, dubSynthesize, dubTranscribe, dubTranslate } from '../../../shared/domains/video/jobs/dub.ts';
import { runStep } from '../../../shared/domains/video/lifecycle.ts';
import { reconcileVideoJobs } from '../../../shared/domains/video/reconciler.ts';

type Names = Extract<keyof typeof videoJobs, JobsOn<'cpu'>>;

/** CPU handlers of the video area: the dub flow's CPU steps (ffmpeg, STT, translation, TTS) and the reconciler. */
export function videoCpuHandlers(infra: Infra): HandlerMap<Names> {
  return {
    'video.dub.transcribe': (p, ctx) =>
      runStep(infra, p.videoJobId, ctx, { jobName: 'video.dub.transcribe', range: [0, 0.2] }, (s) =>
        dubTranscribe(infra, s),
      ),
    'video.dub.translate': (p, ctx) =>
      runStep(infra, p.videoJobId, ctx, { jobName: 'video.dub.translate', range: [0.2, 0.3] }, (s) =>
        dubTranslate(infra, s),
      ),
    'video.dub.synthesize': (p, ctx) =>
      runStep(infra, p.videoJobId, ctx, { jobName: 'video.dub.synthesize', range: [0.3, 0.5] }, (s) =>
        dubSynthesize(infra, s),
      ),
    'video.dub.mux': (p, ctx) =>
      runStep(infra, p.videoJobId, ctx, { jobName: 'video.dub.mux', range: [0.9, 1] }, (s) => dubMux(infra, s)),
    'video.reconcile': () => reconcileVideoJobs(infra),
  };
}
