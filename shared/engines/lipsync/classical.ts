import { detectFast, faceLandmarker } from '../face/human-landmarker.ts';
import type { FaceLandmarker } from '../face/types.ts';
import { decodeMono16k, visemesFromPcm } from '../face/visemes.ts';
import { lerpRig, rigFromFace, warpMouth, type FaceRig } from '../face/warp.ts';
import { fitEven, FrameEncoder } from '../../kernel/media/encoder.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { readFrames } from '../../kernel/media/frames.ts';
import { probeMedia } from '../../kernel/media/probe.ts';
import type { RenderedVideo } from '../core/rendered-video.ts';
import { LipsyncEngine, type LipsyncRequest } from './types.ts';

/**
 * The local lip-sync engine (`default`), classical rather than neural: face landmarks are detected on every
 * Nth frame (keyframes) and interpolated between them (tracking), and the mouth/jaw is warped per frame from the
 * replacement audio's visemes, over the original frame. The original mouth motion is not erased. The output
 * keeps the video's length; the new audio is padded with silence or cut to fit. Frames without a face pass
 * through untouched; a video with no face at all fails with no_face_detected.
 */
export class ClassicalLipsyncEngine extends LipsyncEngine {
  readonly provider = 'default';
  readonly label = 'default:classical-warp';
  readonly capabilities = { selfHosted: true, requiresKey: false };

  constructor(
    private readonly keyframeEvery = 5,
    private readonly landmarker: FaceLandmarker = faceLandmarker(),
  ) {
    super();
  }

  protected async _sync(req: LipsyncRequest): Promise<RenderedVideo> {
    const info = await probeMedia(req.videoPath, req.signal);
    if (!info.video)
      throw EngineError.invalidInput(this.provider, 'unreadable', 'video_url holds no video stream.', 'video_url');
    const { width, height } = fitEven(info.video.width, info.video.height, req.size);
    const fps = req.fps;
    const total = Math.max(1, Math.round(info.durationSeconds * fps));
    const pcm = await decodeMono16k(req.audioPath, req.signal);
    const mouth = visemesFromPcm(pcm, fps, total);

    const enc = new FrameEncoder({
      width,
      height,
      fps,
      audioPath: req.audioPath,
      audioFilter: 'apad',
      outPath: req.outPath,
      signal: req.signal,
    });
    const K = Math.max(1, this.keyframeEvery);
    let pending: Uint8Array[] = [];
    let prevRig: FaceRig | null = null;
    let anyFace = false;
    let index = 0;
    const detect = async (frame: Uint8Array): Promise<FaceRig | null> => {
      const faces = await detectFast(this.landmarker, { width, height, data: frame }, 1);
      return faces[0] ? rigFromFace(faces[0]) : null;
    };
    const flush = async (nextRig: FaceRig | null) => {
      for (let i = 0; i < pending.length; i++) {
        const src = pending[i]!;
        const a = prevRig ?? nextRig;
        const b = nextRig ?? prevRig;
        if (a && b) {
          const out = new Uint8Array(src);
          warpMouth(src, out, width, height, lerpRig(a, b, i / pending.length), mouth[index] ?? { open: 0, spread: 0 });
          await enc.write(out);
        } else {
          await enc.write(src);
        }
        index++;
      }
      pending = [];
    };
    try {
      for await (const frame of readFrames(req.videoPath, width, height, fps, req.signal)) {
        if (index + pending.length === 0) {
          prevRig = await detect(frame);
          anyFace ||= prevRig !== null;
        }
        pending.push(frame);
        if (pending.length > K) {
          const last = pending.pop()!;
          const rig = await detect(last);
          anyFace ||= rig !== null;
          await flush(rig);
          prevRig = rig ?? prevRig;
          pending.push(last);
          await req.onProgress(index / total);
        }
      }
      await flush(prevRig);
      if (!anyFace)
        throw EngineError.invalidInput(this.provider, 'no_face', 'No face was found in video_url.', 'video_url');
      await enc.finish();
    } catch (e) {
      enc.kill();
      throw e;
    }
    return { durationSeconds: index / fps, width, height, provider: this.label };
  }
}
