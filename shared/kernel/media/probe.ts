import { runTool } from './ffmpeg.ts';
import { ToolFailure } from './tool-failure.ts';

export interface MediaInfo {
  format: string;
  durationSeconds: number;
  video: { width: number; height: number; fps: number; codec: string } | null;
  audio: { sampleRate: number; channels: number; codec: string } | null;
}

interface FfprobeJson {
  format?: { format_name?: string; duration?: string };
  streams?: {
    codec_type?: string;
    codec_name?: string;
    width?: number;
    height?: number;
    avg_frame_rate?: string;
    r_frame_rate?: string;
    sample_rate?: string;
    channels?: number;
    duration?: string;
  }[];
}

/** ffprobe a local file; anything it cannot read is `input_unreadable`. */
export async function probeMedia(path: string, signal?: AbortSignal): Promise<MediaInfo> {
  const out = await runTool(
    'ffprobe',
    ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path],
    { signal, inputFault: true },
  );
  let j: FfprobeJson;
  try {
    j = JSON.parse(out.toString()) as FfprobeJson;
  } catch {
    throw new ToolFailure('unreadable', 'The media could not be read.');
  }
  const v = j.streams?.find((s) => s.codec_type === 'video');
  const a = j.streams?.find((s) => s.codec_type === 'audio');
  if (!v && !a) throw new ToolFailure('unreadable', 'The file holds no audio or video stream.');
  const rate = (r?: string) => {
    const [n, d] = (r ?? '0/1').split('/').map(Number);
    return n && d ? n / d : 0;
  };
  return {
    format: j.format?.format_name ?? '',
    durationSeconds: Number(j.format?.duration ?? v?.duration ?? a?.duration ?? 0) || 0,
    video: v
      ? {
          width: v.width ?? 0,
          height: v.height ?? 0,
          fps: rate(v.avg_frame_rate) || rate(v.r_frame_rate),
          codec: v.codec_name ?? '',
        }
      : null,
    audio: a ? { sampleRate: Number(a.sample_rate ?? 0), channels: a.channels ?? 0, codec: a.codec_name ?? '' } : null,
  };
}
