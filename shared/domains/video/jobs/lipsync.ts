import type { LipsyncVideoBody } from '../../../contracts/video.ts';
import type { Infra } from '../../../platform/infra.ts';
import { fetchInput } from '../inputs.ts';
import type { JobOutcome, StepContext } from '../lifecycle.ts';
import { resolveJobVideoKey } from '../vendor-keys.ts';
import { presign, storedVideoOutcome } from './outputs.ts';

/** Runs a lip-sync engine on local files (shared by the lipsync job and the dub flow's lipsync step). */
export async function lipsyncFiles(
  infra: Infra,
  s: StepContext,
  provider: string,
  inputs: { videoPath: string; videoKey: string; audioPath: string; audioKey: string },
  outPath: string,
  range: [number, number],
) {
  const engine = infra.engines.video.lipsync.get(provider);
  const remote = engine.provider !== 'default';
  return engine.sync({
    videoPath: inputs.videoPath,
    audioPath: inputs.audioPath,
    outPath,
    size: infra.config.VIDEO_AVATAR_SIZE,
    fps: infra.config.VIDEO_FPS,
    videoUrl: remote ? await presign(infra, inputs.videoKey) : undefined,
    audioUrl: remote ? await presign(infra, inputs.audioKey) : undefined,
    apiKey: (await resolveJobVideoKey(infra, s.job, engine.provider))?.key,
    signal: s.signal,
    onProgress: (f) => s.progress(range[0] + (range[1] - range[0]) * f),
  });
}

export async function runLipsync(infra: Infra, s: StepContext): Promise<JobOutcome> {
  const req = s.job.request as unknown as LipsyncVideoBody;
  const video = await fetchInput(infra, s.job, 'video_url', req.video_url, 'video', s.workDir, s.signal);
  await s.progress(0.05);
  const audio = await fetchInput(infra, s.job, 'audio_url', req.audio_url, 'audio', s.workDir, s.signal);
  await s.progress(0.1);
  const outPath = `${s.workDir}/lipsync.mp4`;
  const out = await lipsyncFiles(
    infra,
    s,
    s.job.provider,
    { videoPath: video.path, videoKey: video.key, audioPath: audio.path, audioKey: audio.key },
    outPath,
    [0.1, 0.95],
  );
  return storedVideoOutcome(infra, s, outPath, 'lipsync.mp4', out);
}
