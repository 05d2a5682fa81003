import { ApiError } from '../../kernel/errors/api-error.ts';
import { formatBytes, safeFetchBuffer } from '../../kernel/net/safe-fetch.ts';
import type { Infra } from '../../platform/infra.ts';
import { transcribeAudioUrl } from './audio-source.ts';
import type { IngestBody } from '../../contracts/rag.ts';
import { MAX_INGEST_BYTES } from '../../contracts/rag.ts';
import { extractReadableText } from './html-text.ts';

/** A span of the document text with the audio time it covers (seconds). */
export interface TimedSpan {
  start: number;
  end: number;
  startTime: number;
  endTime: number;
}

/** The text to chunk, where it came from, and (for audio) which character spans cover which times. */
export interface LoadedContent {
  text: string;
  sourceUrl: string | null;
  /** Added to every chunk's metadata under the document's own keys. */
  metadata: Record<string, unknown>;
  timeline: TimedSpan[] | null;
  /** Seconds of audio transcribed (metered as stt). */
  audioSeconds: number;
}

/** A page fetched for `url` ingest may be larger than the text it yields; markup is bounded at 10 MB. */
const MAX_PAGE_BYTES = 10 * 1024 * 1024;

export function assertIngestSize(text: string, what: string): void {
  if (Buffer.byteLength(text, 'utf8') > MAX_INGEST_BYTES) {
    throw new ApiError('payload_too_large', { what, limit: formatBytes(MAX_INGEST_BYTES) }, 'content');
  }
}

/** Resolves the body into text: given text, a fetched page's readable text, or an audio file's transcript. */
export async function loadContent(infra: Infra, body: IngestBody, signal?: AbortSignal): Promise<LoadedContent> {
  switch (body.contentType) {
    case 'text':
    case 'transcript': {
      if (body.content === undefined) {
        throw ApiError.validation(`content is required for contentType "${body.contentType}"`, 'content');
      }
      assertIngestSize(body.content, 'content');
      return { text: body.content, sourceUrl: body.sourceUrl ?? null, metadata: {}, timeline: null, audioSeconds: 0 };
    }
    case 'url': {
      const url = body.sourceUrl ?? body.content?.trim();
      if (!url) throw ApiError.validation('sourceUrl (or content holding the URL) is required for "url"', 'sourceUrl');
      const param = body.sourceUrl ? 'sourceUrl' : 'content';
      const { buf, contentType } = await safeFetchBuffer(url, {
        policy: infra.addressPolicy,
        maxBytes: Math.min(infra.config.OUTBOUND_MAX_BYTES, MAX_PAGE_BYTES),
        timeoutMs: infra.config.OUTBOUND_TIMEOUT_MS,
        signal,
        param,
        headers: { accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1' },
      });
      const ct = contentType.toLowerCase();
      const raw = buf.toString('utf8');
      let text: string;
      let title: string | null = null;
      if (ct.includes('html') || (!ct && /^\s*<(!doctype html|html|head|body)/i.test(raw))) {
        ({ text, title } = extractReadableText(raw));
      } else if (ct.startsWith('text/') || ct.includes('json') || ct.includes('xml') || !ct) {
        text = raw;
      } else {
        throw new ApiError(
          'unsupported_media_type',
          { detail: `${param} returned ${contentType}; url ingest reads HTML or plain text` },
          param,
        );
      }
      assertIngestSize(text, 'text extracted from the page');
      const metadata: Record<string, unknown> = { sourceUrl: url };
      if (title) metadata.title = title;
      return { text, sourceUrl: url, metadata, timeline: null, audioSeconds: 0 };
    }
    case 'audio': {
      const url = body.sourceUrl;
      if (!url) throw ApiError.validation('sourceUrl is required for contentType "audio"', 'sourceUrl');
      const t = await transcribeAudioUrl(infra, url, signal);
      const parts: string[] = [];
      const timeline: TimedSpan[] = [];
      let offset = 0;
      for (const seg of t.segments) {
        const s = seg.text.trim();
        if (!s) continue;
        if (parts.length) offset += 1; // the "\n" joining segments
        timeline.push({ start: offset, end: offset + s.length, startTime: seg.start, endTime: seg.end });
        parts.push(s);
        offset += s.length;
      }
      const text = parts.length ? parts.join('\n') : t.text.trim();
      assertIngestSize(text, 'transcript');
      return {
        text,
        sourceUrl: url,
        metadata: { sourceUrl: url, language: t.language, duration: t.duration },
        timeline: timeline.length ? timeline : null,
        audioSeconds: t.duration,
      };
    }
  }
}

/** The time range of the audio that a chunk's characters [start, end) cover. */
export function timesFor(timeline: TimedSpan[], start: number, end: number): { startTime: number; endTime: number } {
  let startTime = Infinity;
  let endTime = -Infinity;
  for (const s of timeline) {
    if (s.end <= start || s.start >= end) continue;
    startTime = Math.min(startTime, s.startTime);
    endTime = Math.max(endTime, s.endTime);
  }
  if (startTime === Infinity) return { startTime: 0, endTime: 0 };
  return { startTime, endTime };
}
