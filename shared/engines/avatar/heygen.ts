import { readFile } from 'node:fs/promises';
import { onAsyncVideoVendor } from '../core/async-video.ts';
import { trimSlash } from '../core/vendor-client.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { AvatarEngine, type AvatarRequest } from './types.ts';
import type { RenderedVideo } from '../core/rendered-video.ts';

export interface HeyGenOptions {
  /** Overrides both api.heygen.com and upload.heygen.com (a compatible server, or a local double). */
  baseUrl?: string;
  pollMs?: number;
}

interface Envelope<T> {
  code?: number;
  error?: { code?: string; message?: string } | string | null;
  data: T;
}

/**
 * HeyGen (commercial, the caller's own key): the photo is uploaded as a talking photo
 * (`POST upload.heygen.com/v1/talking_photo`, raw image body), a video is generated from it with our audio
 * (`POST /v2/video/generate`, character `talking_photo`, voice `audio`), and `GET /v1/video_status.get` is
 * polled until `completed`; the MP4 is then downloaded into the job's folder. Auth: `X-Api-Key`.
 */
export class HeyGenAvatarEngine extends onAsyncVideoVendor(AvatarEngine, 'heygen') {
  readonly label = 'heygen.avatar';
  private readonly upload: string;

  constructor(opts: HeyGenOptions = {}) {
    super(opts);
    this.upload = trimSlash(opts.baseUrl ?? 'https://upload.heygen.com');
  }

  protected async _render(req: AvatarRequest): Promise<RenderedVideo> {
    if (!req.apiKey) throw new EngineError(this.provider, 'auth', 'HeyGen needs an API key', false);
    if (!req.audioUrl) throw new EngineError(this.provider, 'bad_request', 'HeyGen needs the audio as a URL', false);
    const headers = { 'x-api-key': req.apiKey, accept: 'application/json' };
    const image = await readFile(req.imagePath);
    const jpeg = image[0] === 0xff && image[1] === 0xd8;
    const photo = await this.vendor.json<Envelope<{ talking_photo_id: string }>>(`${this.upload}/v1/talking_photo`, {
      headers: { ...headers, 'content-type': jpeg ? 'image/jpeg' : 'image/png' },
      body: image,
      signal: req.signal,
    });
    const [w, h] = req.size >= 720 ? [1280, 720] : [req.size, req.size];
    const created = await this.vendor.json<Envelope<{ video_id: string }>>('/v2/video/generate', {
      headers,
      json: {
        video_inputs: [
          {
            character: { type: 'talking_photo', talking_photo_id: photo.data.talking_photo_id },
            voice: { type: 'audio', audio_url: req.audioUrl },
          },
        ],
        dimension: { width: w, height: h },
      },
      signal: req.signal,
    });
    const videoId = created.data.video_id;
    type Status = Envelope<{ status: string; video_url?: string; error?: { message?: string } | null }>;
    const done = await this.vendor.poll<Status>(
      `/v1/video_status.get?video_id=${encodeURIComponent(videoId)}`,
      (s) => {
        if (s.data.status === 'failed') {
          throw new EngineError(
            this.provider,
            'bad_request',
            `HeyGen failed: ${s.data.error?.message ?? 'unknown'}`,
            false,
          );
        }
        return s.data.status === 'completed' && s.data.video_url ? s.data.video_url : null;
      },
      { headers, signal: req.signal, onWait: (n) => void req.onProgress(Math.min(0.9, 0.1 + n * 0.02)) },
    );
    return this.vendor.download(done, {
      outPath: req.outPath,
      signal: req.signal,
      label: this.label,
      size: { width: w, height: h },
    });
  }
}
