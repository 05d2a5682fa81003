import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ffmpeg } from '../../kernel/media/ffmpeg.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import type { RenderedVideo } from '../core/rendered-video.ts';
import { VideoGenEngine, type GenerateRequest } from './types.ts';

const FONTS = [
  '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf',
  '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/truetype/liberation/LiberationSans-Bold.ttf',
];

/** Greedy word wrap to a character budget per line, at most `maxLines` lines (the rest is ellipsised). */
export function wrapText(text: string, perLine: number, maxLines: number): string[] {
  const words = text.replace(/\s+/g, ' ').trim().split(' ');
  const lines: string[] = [];
  let cur = '';
  for (const w of words) {
    const word = w.length > perLine ? `${w.slice(0, perLine - 1)}…` : w;
    if ((cur ? cur.length + 1 : 0) + word.length > perLine) {
      lines.push(cur);
      cur = word;
    } else cur = cur ? `${cur} ${word}` : word;
  }
  if (cur) lines.push(cur);
  if (lines.length > maxLines) {
    lines.length = maxLines;
    lines[maxLines - 1] = `${lines[maxLines - 1]!.slice(0, perLine - 1)}…`;
  }
  return lines;
}

/**
 * The `default` text-to-video engine is NOT a generative model (none can run locally on CPU): it renders a
 * typographic title card — the prompt set in type over a slowly drifting two-colour gradient chosen from the
 * prompt's hash, with a fade in and out — and says so in result.provider (`default:title-card`) and on the card.
 */
export class TitleCardEngine extends VideoGenEngine {
  readonly provider = 'default';
  readonly label = 'default:title-card';
  readonly capabilities = { selfHosted: true, requiresKey: false };

  protected async _generate(req: GenerateRequest): Promise<RenderedVideo> {
    const font = FONTS.find((f) => existsSync(f));
    if (!font)
      throw new EngineError('default', 'unavailable', 'no TrueType font found (install fonts-dejavu-core)', false);
    const h = createHash('sha256').update(req.prompt).digest();
    const hue = (i: number) =>
      `0x${[h[i]!, h[i + 1]!, h[i + 2]!].map((b) => ((b >> 1) + 24).toString(16).padStart(2, '0')).join('')}`;
    const { width: w, height: ht, durationSeconds: d, fps } = req;
    const fontSize = Math.round(Math.min(w, ht) / 12);
    const perLine = Math.max(8, Math.floor((w * 0.84) / (fontSize * 0.6)));
    const lines = wrapText(req.prompt, perLine, Math.max(1, Math.floor((ht * 0.7) / (fontSize * 1.3))));
    const textFile = join(dirname(req.outPath), 'title.txt');
    await writeFile(textFile, lines.join('\n'));
    const labelFile = join(dirname(req.outPath), 'label.txt');
    await writeFile(labelFile, 'Title card (not AI-generated video)');
    const fade = Math.min(0.6, d / 4);
    const esc = (p: string) => p.replace(/\\/g, '/').replace(/:/g, '\\:').replace(/'/g, "\\'");
    const vf = [
      `drawtext=fontfile='${esc(font)}':textfile='${esc(textFile)}':fontsize=${fontSize}:fontcolor=white:line_spacing=${Math.round(fontSize * 0.3)}:x=(w-text_w)/2:y=(h-text_h)/2:shadowcolor=black@0.5:shadowx=2:shadowy=2`,
      `drawtext=fontfile='${esc(font)}':textfile='${esc(labelFile)}':fontsize=${Math.max(10, Math.round(fontSize / 3))}:fontcolor=white@0.7:x=(w-text_w)/2:y=h-text_h-${Math.round(ht * 0.04)}`,
      `fade=t=in:st=0:d=${fade}`,
      `fade=t=out:st=${Math.max(0, d - fade)}:d=${fade}`,
      'format=yuv420p',
    ].join(',');
    await req.onProgress(0.1);
    await ffmpeg(
      [
        '-f',
        'lavfi',
        '-i',
        `gradients=s=${w}x${ht}:r=${fps}:d=${d}:c0=${hue(0)}:c1=${hue(3)}:speed=0.004:type=linear`,
        '-vf',
        vf,
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-crf',
        '22',
        '-r',
        String(fps),
        '-t',
        String(d),
        '-movflags',
        '+faststart',
        req.outPath,
      ],
      { signal: req.signal },
    );
    return { durationSeconds: d, width: w, height: ht, provider: this.label };
  }
}
