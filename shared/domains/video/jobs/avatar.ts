import type { AvatarVideoBody } from '../../../contracts/video.ts';
import { apertium } from '../../../engines/translate/apertium.ts';
import type { Infra } from '../../../platform/infra.ts';
import { objectKey } from '../../../kernel/storage/keys.ts';
import { fetchInput } from '../inputs.ts';
import type { JobOutcome, StepContext } from '../lifecycle.ts';
import { synthesizeToWav, voiceFor } from '../speech.ts';
import { resolveJobVideoKey } from '../vendor-keys.ts';
import { presign, storedVideoOutcome } from './outputs.ts';

/**
 * Avatar: fetch the image (and audio) into S3; or translate the text (when target_language is set; the text is
 * taken to be English) and synthesize it; then render with the chosen engine and store the MP4.
 */
export async function runAvatar(infra: Infra, s: StepContext): Promise<JobOutcome> {
  const req = s.job.request as unknown as AvatarVideoBody;
  const image = await fetchInput(infra, s.job, 'image_url', req.image_url, 'image', s.workDir, s.signal);
  await s.progress(0.05);
  let audioPath: string;
  let audioKey: string;
  if (req.audio_url) {
    const audio = await fetchInput(infra, s.job, 'audio_url', req.audio_url, 'audio', s.workDir, s.signal);
    audioPath = audio.path;
    audioKey = audio.key;
  } else {
    let text = req.text!;
    if (req.target_language) {
      [text] = (await apertium().translate({
        texts: [text],
        source: 'en',
        target: req.target_language,
        signal: s.signal,
      })) as [string];
    }
    audioPath = `${s.workDir}/speech.wav`;
    await synthesizeToWav(
      infra,
      { provider: req.tts_provider, job: s.job },
      {
        text,
        ...(await voiceFor(infra, req.tts_provider, req.voice_id, req.target_language)),
        language: req.target_language,
      },
      audioPath,
      s.signal,
    );
    audioKey = objectKey(s.job.owner_id, 'video-inputs', s.job.id, 'speech.wav');
    await infra.storage.putFile(audioKey, audioPath, 'audio/wav', s.signal);
  }
  await s.progress(0.15);
  const engine = infra.engines.video.avatar.get(s.job.provider);
  const outPath = `${s.workDir}/avatar.mp4`;
  const remote = engine.provider !== 'default';
  const out = await engine.render({
    imagePath: image.path,
    audioPath,
    outPath,
    size: infra.config.VIDEO_AVATAR_SIZE,
    fps: infra.config.VIDEO_FPS,
    imageUrl: remote ? await presign(infra, image.key) : undefined,
    audioUrl: remote ? await presign(infra, audioKey) : undefined,
    apiKey: (await resolveJobVideoKey(infra, s.job, engine.provider))?.key,
    signal: s.signal,
    onProgress: (f) => s.progress(0.15 + 0.8 * f),
  });
  return storedVideoOutcome(infra, s, outPath, 'avatar.mp4', out);
}
