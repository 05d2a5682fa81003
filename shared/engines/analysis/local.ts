import type { AnalyzeSections } from '../../contracts/video.ts';
import { runProcess } from '../../kernel/process/spawn.ts';
import { decodeImageRgb, fitEven } from '../../kernel/media/encoder.ts';
import { ffmpeg, runTool } from '../../kernel/media/ffmpeg.ts';
import { detectFast, faceLandmarker } from '../face/human-landmarker.ts';
import { AnalysisEngine, type AnalysisRequest, type AnalysisResult } from './types.ts';

/** At most this many scenes are described (each costs two frame decodes, a face pass and an OCR run). */
const MAX_SCENES = 50;

/**
 * The `default` analysis engine, local and keyless: `transcribe` with the local STT (segment timings), `scenes`
 * from ffmpeg's scene cuts, each described from what can be measured in it: face count, Tesseract OCR text,
 * dominant colour, motion.
 */
export class LocalAnalysisEngine extends AnalysisEngine {
  readonly provider = 'default';
  readonly label = 'default.analysis';
  readonly capabilities = { selfHosted: true, requiresKey: false };
  protected async _analyze(req: AnalysisRequest): Promise<AnalysisResult> {
    const sections: AnalyzeSections = {};
    const duration = req.info.durationSeconds;
    if (req.tasks.includes('transcribe')) {
      if (req.info.audio) {
        const t = await req.transcribe(req.videoPath, req.signal);
        sections.transcript = {
          text: t.text,
          language: t.language,
          segments: t.segments.map(({ start, end, text }) => ({ start, end, text })),
        };
      } else sections.transcript = { text: '', language: 'en', segments: [] };
      await req.onProgress(0.4);
    }
    if (req.tasks.includes('scenes') && req.info.video) {
      const cuts = (await sceneCuts(req.videoPath, 0.3, req.signal)).filter((t) => t > 0.2 && t < duration - 0.2);
      const bounds = [0, ...cuts, duration];
      const size = fitEven(req.info.video.width, req.info.video.height, 640);
      const scenes: Scene[] = [];
      for (let i = 0; i + 1 < bounds.length && i < MAX_SCENES; i++) {
        scenes.push(await describeScene(req.videoPath, bounds[i]!, bounds[i + 1]!, size, req.workDir, i, req.signal));
        await req.onProgress(0.4 + (0.6 * (i + 1)) / (bounds.length - 1));
      }
      sections.scenes = scenes;
    }
    return { sections, provider: this.provider };
  }
}

type Scene = NonNullable<AnalyzeSections['scenes']>[number];

/**
 * Scene cuts with ffmpeg's scene score (select='gt(scene,T)' + showinfo, which reports each selected frame on
 * stderr), in seconds. Read line by line: a long video's showinfo output is not held whole.
 */
async function sceneCuts(path: string, threshold: number, signal: AbortSignal): Promise<number[]> {
  const cuts: number[] = [];
  const vf = `scale=160:-2,select='gt(scene,${threshold})',showinfo`;
  await runProcess('ffmpeg', ['-hide_banner', '-nostdin', '-i', path, '-an', '-vf', vf, '-f', 'null', '-'], {
    signal,
    onStderrLine: (line) => {
      const m = /pts_time:\s*([\d.]+)/.exec(line);
      if (m) cuts.push(Number(m[1]));
    },
  });
  return cuts;
}

function dominantColor(rgb: Uint8Array): string {
  // 4×4×4 histogram; the fullest bin's mean colour.
  const bins = new Map<number, [number, number, number, number]>();
  for (let i = 0; i < rgb.length; i += 3 * 7) {
    const r = rgb[i]!;
    const g = rgb[i + 1]!;
    const b = rgb[i + 2]!;
    const k = ((r >> 6) << 4) | ((g >> 6) << 2) | (b >> 6);
    const e = bins.get(k) ?? [0, 0, 0, 0];
    e[0] += r;
    e[1] += g;
    e[2] += b;
    e[3]++;
    bins.set(k, e);
  }
  const [r, g, b, n] = [...bins.values()].reduce((a, c) => (c[3] > a[3] ? c : a));
  return `#${[r / n, g / n, b / n].map((v) => Math.round(v).toString(16).padStart(2, '0')).join('')}`;
}

function colorName(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const light = max < 50 ? 'dark ' : max > 200 && min > 170 ? 'light ' : '';
  if (max - min < 25) return max < 50 ? 'black' : max > 205 ? 'white' : 'grey';
  const hue =
    max === r ? ((g - b) / (max - min) + 6) % 6 : max === g ? (b - r) / (max - min) + 2 : (r - g) / (max - min) + 4;
  const names = [
    'red',
    'orange',
    'yellow',
    'green',
    'green',
    'cyan',
    'blue',
    'blue',
    'purple',
    'magenta',
    'pink',
    'red',
  ];
  return light + names[Math.floor(hue * 2) % 12]!;
}

function motionBetween(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < a.length; i += 3 * 5) {
    sum += Math.abs(a[i]! - b[i]!) + Math.abs(a[i + 1]! - b[i + 1]!) + Math.abs(a[i + 2]! - b[i + 2]!);
    n += 3;
  }
  return Math.min(1, sum / n / 64);
}

async function frameAt(path: string, t: number, w: number, h: number, out: string, signal: AbortSignal) {
  await ffmpeg(['-ss', t.toFixed(3), '-i', path, '-frames:v', '1', '-vf', `scale=${w}:${h}`, out], {
    signal,
    inputFault: true,
  });
  return decodeImageRgb(out, w, h, signal);
}

/** Describes a scene from what can be measured in it: faces, on-screen text (Tesseract), colour, motion. */
async function describeScene(
  path: string,
  start: number,
  end: number,
  size: { width: number; height: number },
  dir: string,
  i: number,
  signal: AbortSignal,
): Promise<Scene> {
  const mid = (start + end) / 2;
  const a = await frameAt(path, mid, size.width, size.height, `${dir}/scene${i}.png`, signal);
  const b =
    end - start > 0.4
      ? await frameAt(
          path,
          Math.min(end - 0.05, start + (end - start) * 0.8),
          size.width,
          size.height,
          `${dir}/scene${i}b.png`,
          signal,
        )
      : a;
  const faces = await detectFast(faceLandmarker(), { width: size.width, height: size.height, data: a }, 8, 320);
  const ocr = (
    await runTool('tesseract', [`${dir}/scene${i}.png`, 'stdout', '--psm', '11'], { signal }).catch(() =>
      Buffer.alloc(0),
    )
  )
    .toString()
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length >= 3 && /[A-Za-z0-9]{2}/.test(l))
    .join(' ')
    .slice(0, 500);
  const color = dominantColor(a);
  const motion = Math.round(motionBetween(a, b) * 1000) / 1000;
  const parts = [
    faces.length === 0 ? 'no faces' : faces.length === 1 ? '1 face' : `${faces.length} faces`,
    ocr ? `on-screen text "${ocr.slice(0, 120)}"` : 'no readable text',
    `mostly ${colorName(color)} (${color})`,
    motion < 0.05 ? 'static' : motion < 0.2 ? 'some motion' : 'high motion',
  ];
  return {
    start: Math.round(start * 1000) / 1000,
    end: Math.round(end * 1000) / 1000,
    description: `${(end - start).toFixed(1)} s scene: ${parts.join('; ')}.`,
    ocr_text: ocr,
    face_count: faces.length,
    motion,
    dominant_color: color,
  };
}
