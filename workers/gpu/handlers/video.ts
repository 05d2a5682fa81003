import type { JobsOnPool } from '../../../shared/kernel/queue/catalog.ts';
import type { HandlerMap } from '../../../shared/kernel/queue/worker-runner.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import { dubLipsync } from '../../../shared/domains/video/jobs/dub.ts';
import { runAnalyze } from '../../../shared/domains/video/jobs/analyze.ts';
import { runAvatar } from '../../../shared/domains/video/jobs/avatar.ts';
import { runGenerate } from '../../../shared/domains/video/jobs/generate.ts';
import { runLipsync } from '../../../shared/domains/video/jobs/lipsync.ts';
import { runStep } from '../../../shared/domains/video/lifecycle.ts';

/**
 * GPU handlers (avatar, lip-sync, analysis, generation, and the dub flow's lip-sync step). Each records its wall
 * time as GPU-seconds of its pool. Engines stay loaded between jobs (memoised per process).
 */
export function videoGpuHandlers(infra: Infra): HandlerMap<JobsOnPool<'gpu-'>> {
  return {
    'video.avatar': (p, ctx) =>
      runStep(infra, p.videoJobId, ctx, { gpuPool: 'avatar', jobName: 'video.avatar' }, (s) => runAvatar(infra, s)),
    'video.lipsync': (p, ctx) =>
      runStep(infra, p.videoJobId, ctx, { gpuPool: 'lipsync', jobName: 'video.lipsync' }, (s) => runLipsync(infra, s)),
    'video.analyze': (p, ctx) =>
      runStep(infra, p.videoJobId, ctx, { gpuPool: 'analysis', jobName: 'video.analyze' }, (s) => runAnalyze(infra, s)),
    'video.generate': (p, ctx) =>
      runStep(infra, p.videoJobId, ctx, { gpuPool: 'generate', jobName: 'video.generate' }, (s) =>
        runGenerate(infra, s),
      ),
    'video.dub.lipsync': (p, ctx) =>
      runStep(infra, p.videoJobId, ctx, { gpuPool: 'lipsync', jobName: 'video.dub.lipsync', range: [0.5, 0.9] }, (s) =>
        dubLipsync(infra, s),
      ),
  };
}
