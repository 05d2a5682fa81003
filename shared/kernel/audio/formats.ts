/** Output formats the platform encodes to, with their Content-Type. */
export const AUDIO_FORMATS = ['wav', 'mp3', 'ogg', 'opus', 'aac', 'flac', 'pcm'] as const;
export type AudioFormat = (typeof AUDIO_FORMATS)[number];

/**
 * `ogg` (the native API) and `opus` (the OpenAI-compatible one) are both Opus in an Ogg container; `pcm` is raw
 * mono s16le with no header; `aac` is ADTS.
 */
export const AUDIO_CONTENT_TYPES: Record<AudioFormat, string> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  pcm: 'audio/pcm',
};

export type MediaKind = 'media' | 'not_media' | 'unknown';

/**
 * A quick look at the first bytes of an upload: known audio/video containers are `media`, well-known non-media
 * files (images, PDF, archives, text, HTML/JSON) are `not_media` (→ 415), and anything else is `unknown` and left
 * to the decoder (→ 400 invalid_audio when it cannot read it).
 */
export function sniffMedia(head: Buffer): MediaKind {
  if (head.length < 4) return 'unknown';
  const ascii = (from: number, to: number) => head.toString('latin1', from, to);
  const b = (i: number) => head[i] ?? 0;
  if (ascii(0, 4) === 'RIFF') {
    const kind = ascii(8, 12);
    if (kind === 'WAVE' || kind === 'AVI ' || kind === 'RMP3') return 'media';
    if (kind === 'WEBP') return 'not_media';
  }
  if (ascii(0, 4) === 'OggS' || ascii(0, 4) === 'fLaC' || ascii(0, 3) === 'ID3') return 'media';
  if (ascii(4, 8) === 'ftyp' || ascii(0, 4) === 'FORM' || ascii(0, 5) === '#!AMR' || ascii(0, 4) === 'caff') {
    return 'media';
  }
  if (ascii(0, 4) === '.snd' || ascii(0, 4) === 'MThd') return 'media';
  if (b(0) === 0x1a && b(1) === 0x45 && b(2) === 0xdf && b(3) === 0xa3) return 'media'; // Matroska/WebM
  if (b(0) === 0x30 && b(1) === 0x26 && b(2) === 0xb2 && b(3) === 0x75) return 'media'; // ASF/WMA
  if (b(0) === 0xff && (b(1) & 0xe0) === 0xe0 && b(1) !== 0xff) return 'media'; // MPEG audio / ADTS sync
  // Known non-media files.
  if (b(0) === 0x89 && ascii(1, 4) === 'PNG') return 'not_media';
  if (b(0) === 0xff && b(1) === 0xd8 && b(2) === 0xff) return 'not_media'; // JPEG
  if (ascii(0, 4) === 'GIF8' || ascii(0, 4) === '%PDF' || ascii(0, 2) === 'PK' || ascii(0, 2) === 'BM') {
    return 'not_media';
  }
  if (b(0) === 0x1f && b(1) === 0x8b) return 'not_media'; // gzip
  if (looksLikeText(head)) return 'not_media';
  return 'unknown';
}

/** Printable UTF-8/ASCII with whitespace only (JSON, HTML, CSV, plain text). */
function looksLikeText(head: Buffer): boolean {
  const n = Math.min(head.length, 512);
  for (let i = 0; i < n; i++) {
    const c = head[i]!;
    if (c === 0x09 || c === 0x0a || c === 0x0d) continue;
    if (c < 0x20 || c === 0x7f) return false;
  }
  const text = head.subarray(0, n).toString('utf8');
  return !text.includes('\uFFFD') || n < 4;
}
