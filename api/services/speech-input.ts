import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { sniffMedia } from '../../shared/kernel/audio/formats.ts';
import { ApiError, isApiError } from '../../shared/kernel/errors/api-error.ts';
import { rejectNul } from '../../shared/composition/http/input-guard.ts';

export interface AudioUpload {
  buffer: Buffer;
  filename: string;
  mimetype: string;
}

export interface SpeechRequestInput {
  /** JSON body, or the multipart text fields (a field sent several times, like `key[]`, becomes an array). */
  fields: Record<string, unknown>;
  file: AudioUpload | null;
}

/**
 * Reads a JSON or multipart request. The upload is buffered under @fastify/multipart's 25 MB limit (beyond it the
 * plugin throws FST_REQ_FILE_TOO_LARGE → 413); a second file is a 400.
 */
export async function readSpeechRequest(req: FastifyRequest): Promise<SpeechRequestInput> {
  if (!req.isMultipart()) {
    const body = req.body;
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw ApiError.validation('the body must be a JSON object');
    }
    return { fields: (body as Record<string, unknown>) ?? {}, file: null };
  }
  const fields: Record<string, unknown> = {};
  let file: AudioUpload | null = null;
  try {
    await readParts(req, fields, (f) => (file = f));
  } catch (e) {
    throw asMultipartError(e);
  }
  rejectNul('body', fields);
  return { fields, file };
}

/**
 * busboy throws plain Errors for a malformed body (no boundary, data cut short); they become a 400 naming the
 * problem. Our own errors and the plugin's FST_* errors (413 limits) keep their meaning.
 */
function asMultipartError(e: unknown): unknown {
  if (isApiError(e) || !(e instanceof Error) || (e as { code?: string }).code?.startsWith('FST_')) return e;
  const detail = /boundary/i.test(e.message)
    ? 'no boundary in the Content-Type'
    : /unexpected end/i.test(e.message)
      ? 'the body ends before its closing boundary'
      : 'a part could not be read';
  return new ApiError('invalid_multipart', { detail });
}

async function readParts(
  req: FastifyRequest,
  fields: Record<string, unknown>,
  setFile: (f: AudioUpload) => void,
): Promise<void> {
  for await (const part of req.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== 'file') {
        part.file.resume();
        throw ApiError.validation(
          `unexpected file field "${part.fieldname}"; send the audio as "file"`,
          part.fieldname,
        );
      }
      const buffer = await part.toBuffer();
      setFile({ buffer, filename: part.filename, mimetype: part.mimetype });
    } else {
      const value = String(part.value);
      const prev = fields[part.fieldname];
      if (part.fieldname.endsWith('[]')) fields[part.fieldname] = [...((prev as string[] | undefined) ?? []), value];
      else fields[part.fieldname] = value;
    }
  }
}

/** Validates input against a schema; the first problem becomes a 400 naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, data: unknown): z.infer<S> {
  const r = schema.safeParse(data);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const param = issue.path.map(String).join('.') || null;
  throw ApiError.validation(`${param ? `${param}: ` : ''}${issue.message}`, param);
}

/** 415 for an upload that is recognisably not audio or video (an image, a PDF, text…). */
export function assertLooksLikeMedia(buf: Buffer, param: string): void {
  if (buf.length === 0) throw new ApiError('invalid_audio', { detail: 'the file is empty' }, param);
  if (sniffMedia(buf.subarray(0, 512)) === 'not_media') {
    throw new ApiError(
      'unsupported_media_type',
      { detail: `The ${param} is not audio: send an audio or video file (wav, mp3, ogg, flac, m4a, webm, …).` },
      param,
    );
  }
}
