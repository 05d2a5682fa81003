import { faceLandmarker } from '../face/human-landmarker.ts';
import type { FaceLandmarker } from '../face/types.ts';
import { decodeMono16k, visemesFromPcm } from '../face/visemes.ts';
import { blinkAt, rigFromFace, warpBlink, warpMouth } from '../face/warp.ts';
import { decodeImageRgb, fitEven, FrameEncoder } from '../../kernel/media/encoder.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { probeMedia } from '../../kernel/media/probe.ts';
import { AvatarEngine, type AvatarRequest } from './types.ts';
import type { RenderedVideo } from '../core/rendered-video.ts';

/**
 * The local avatar engine (`default`): a classical, landmark-driven animation of the still image, not a neural
 * model. Face mesh on the image (Human/FaceMesh); per frame, the jaw opens with the audio's loudness and the
 * lips spread or round with its zero-crossing rate (visemes), the eyelids blink every few seconds, and the head
 * sways slightly (a slow moving crop). Frames go to ffmpeg as raw RGB → H.264 + AAC.
 */
export class ClassicalAvatarEngine extends AvatarEngine {
  readonly provider = 'default';
  readonly label = 'default:classical-warp';
  readonly capabilities = { selfHosted: true, requiresKey: false };

  constructor(private readonly landmarker: FaceLandmarker = faceLandmarker()) {
    super();
  }

  protected async _render(req: AvatarRequest): Promise<RenderedVideo> {
    const info = await probeMedia(req.imagePath, req.signal);
    const { width, height } = fitEven(info.video!.width, info.video!.height, req.size);
    // Render a margin around the frame so the sway crop never shows an edge.
    const m = Math.max(6, Math.round(Math.max(width, height) * 0.03));
    const bw = width + 2 * m;
    const bh = height + 2 * m;
    const base = await decodeImageRgb(req.imagePath, bw, bh, req.signal);
    const faces = await this.landmarker.detect({ width: bw, height: bh, data: base });
    if (faces.length === 0) {
      throw EngineError.invalidInput(
        this.provider,
        'no_face',
        'No face was found in image_url; use a photo with a visible, frontal face.',
        'image_url',
      );
    }
    const face = faces.reduce((a, b) => (b.box[2] * b.box[3] > a.box[2] * a.box[3] ? b : a));
    const rig = rigFromFace(face);

    const pcm = await decodeMono16k(req.audioPath, req.signal);
    const seconds = pcm.length / 16_000;
    if (seconds < 0.05) throw EngineError.invalidInput(this.provider, 'unreadable', 'The audio is empty.');
    const mouth = visemesFromPcm(pcm, req.fps);
    const frames = mouth.length;

    // A slow sway of a couple of percent: a moving crop inside the margin. (ffmpeg's rotate filter for a tilt
    // costs ~7× the whole render, so there is none.)
    const sway = `crop=${width}:${height}:x='${m}+${(m * 0.5).toFixed(1)}*sin(2*PI*t/3.7)':y='${m}+${(m * 0.35).toFixed(1)}*sin(2*PI*t/5.3+1)'`;
    const enc = new FrameEncoder({
      width: bw,
      height: bh,
      fps: req.fps,
      audioPath: req.audioPath,
      videoFilter: sway,
      outPath: req.outPath,
      signal: req.signal,
    });
    try {
      for (let f = 0; f < frames; f++) {
        req.signal.throwIfAborted();
        const frame = new Uint8Array(base);
        warpMouth(base, frame, bw, bh, rig, mouth[f]!);
        warpBlink(base, frame, bw, bh, rig, blinkAt(f, req.fps));
        await enc.write(frame);
        if (f % 25 === 0) await req.onProgress(f / frames);
      }
      await enc.finish();
    } catch (e) {
      enc.kill();
      throw e;
    }
    return { durationSeconds: frames / req.fps, width, height, provider: this.label };
  }
}
