import type { GenerateVideoBody } from '../../../contracts/video.ts';
import type { Infra } from '../../../platform/infra.ts';
import type { JobOutcome, StepContext } from '../lifecycle.ts';
import { resolveJobVideoKey } from '../vendor-keys.ts';
import { storedVideoOutcome } from './outputs.ts';

/** Generate: text-to-video with the resolved provider (`auto` was resolved at submission). */
export async function runGenerate(infra: Infra, s: StepContext): Promise<JobOutcome> {
  const req = s.job.request as unknown as GenerateVideoBody;
  const engine = infra.engines.video.generate.get(s.job.provider);
  const outPath = `${s.workDir}/generated.mp4`;
  const out = await engine.generate({
    prompt: req.prompt,
    negativePrompt: req.negative_prompt,
    durationSeconds: req.duration_seconds,
    width: req.width,
    height: req.height,
    fps: req.fps,
    outPath,
    apiKey: (await resolveJobVideoKey(infra, s.job, engine.provider))?.key,
    signal: s.signal,
    onProgress: (f) => s.progress(0.9 * f),
  });
  return storedVideoOutcome(infra, s, outPath, 'generated.mp4', out);
}
