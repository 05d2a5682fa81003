import type { OpenAPIV3 } from 'openapi-types';
import { z } from 'zod';
import { OpenAiTranscriptionFields, TranscribeOptions } from '../../shared/contracts/speech.ts';

/** What a client sends, as JSON Schema (defaults shown; transforms are not part of the wire format). */
function inputSchema(schema: z.ZodType): OpenAPIV3.SchemaObject {
  const { $schema: _s, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return json as OpenAPIV3.SchemaObject;
}

function withFile(fields: OpenAPIV3.SchemaObject, required: string[]): OpenAPIV3.SchemaObject {
  return {
    ...fields,
    properties: {
      file: { type: 'string', format: 'binary', description: 'The audio or video file (≤ 25 MB)' },
      ...fields.properties,
    },
    required: [...new Set([...(fields.required ?? []), ...required])],
  };
}

function transcribeBody(): OpenAPIV3.RequestBodyObject {
  const options = inputSchema(TranscribeOptions);
  return {
    required: true,
    description: 'Either multipart/form-data with `file` and the options as fields, or JSON with `audioUrl`.',
    content: {
      'multipart/form-data': { schema: withFile(options, []) },
      'application/json': { schema: { ...options, required: ['audioUrl'] } },
    },
  };
}

/**
 * Request bodies of the three upload routes. They read their body themselves (a streamed multipart upload, or
 * JSON), so Fastify has no body schema to validate and the generated document would show none: these are
 * added to the document instead, from the same zod schemas the routes parse with.
 */
export function uploadRequestBodies(): Record<string, OpenAPIV3.RequestBodyObject> {
  return {
    '/v1/transcribe': transcribeBody(),
    '/v1/transcribe/async': transcribeBody(),
    '/v1/audio/transcriptions': {
      required: true,
      description: 'multipart/form-data, as the OpenAI SDK sends it.',
      content: {
        'multipart/form-data': { schema: withFile(inputSchema(OpenAiTranscriptionFields), ['file', 'model']) },
      },
    },
  };
}

/** Adds the upload bodies to the generated document (swagger's `transformObject`). */
export function addUploadBodies(doc: OpenAPIV3.Document): OpenAPIV3.Document {
  for (const [path, body] of Object.entries(uploadRequestBodies())) {
    const op = doc.paths[path]?.post;
    if (op) op.requestBody = body;
  }
  return doc;
}
