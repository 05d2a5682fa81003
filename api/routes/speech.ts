import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  JobIdParams,
  OpenAiSpeechBody,
  OpenAiTranscriptionFields,
  SynthesizeBody,
  TranscriptionJob,
  TranscriptionResult,
  VoiceList,
  VoicesQuery,
} from '../../shared/contracts/speech.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import {
  audioModels,
  resolveModel,
  sse,
  toSrt,
  toVtt,
  transcriptionSse,
  verboseJson,
  voiceFor,
} from '../services/speech-openai.ts';
import { assertLooksLikeMedia, parseInput, readSpeechRequest } from '../services/speech-input.ts';
import { listVoices, synthesizeStream } from '../services/speech.ts';
import { transcribeAudioIncremental } from '../../shared/domains/speech/transcription-stream.ts';
import { getTranscription, submitTranscriptionJob, syncMaxSeconds, transcribeSync } from '../services/transcription.ts';
import { toContractResult, transcribeAudio, type TranscribeCall } from '../../shared/domains/speech/transcription.ts';

/** Aborts when the client goes away before the response is finished (stops engines, ffmpeg, fetches). */
function clientSignal(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) ac.abort(new Error('client disconnected'));
  });
  return ac.signal;
}

const uploadDoc = 'JSON `{audioUrl, …}` or multipart/form-data with `file` (≤ 25 MB) and the same fields.';

/** Routes of the speech area, registered at the root with their full /v1/... paths. */
export const speechRoutes: FastifyPluginAsyncZod = async (app) => {
  const { infra } = app;
  const tags = ['Speech'];

  app.post(
    '/v1/synthesize',
    {
      schema: {
        tags,
        summary: 'Synthesize speech (streamed audio: wav, mp3 or ogg)',
        body: SynthesizeBody,
        produces: ['audio/wav', 'audio/mpeg', 'audio/ogg'],
      },
      config: { idempotent: true },
    },
    async (req, reply) => {
      const b = req.body;
      const out = await synthesizeStream(
        infra,
        req,
        { ...b, format: b.format, operation: 'synthesize' },
        clientSignal(reply),
      );
      return reply.header('content-type', out.contentType).send(Readable.from(out.body));
    },
  );

  app.get(
    '/v1/voices',
    {
      schema: {
        tags,
        summary: 'List voices (id, name, language, gender, provider)',
        querystring: VoicesQuery,
        response: { 200: VoiceList },
      },
    },
    async (req) => ({ data: await listVoices(infra, req.query.provider, req.query.language) }),
  );

  app.post(
    '/v1/transcribe',
    {
      schema: {
        tags,
        summary: 'Transcribe audio synchronously',
        description: uploadDoc,
        response: { 200: TranscriptionResult },
      },
      config: { idempotent: true },
    },
    async (req, reply) => {
      const out = await transcribeSync(infra, req, await readSpeechRequest(req), clientSignal(reply));
      // Which model heard it, in words: a local engine says whether it was biased, and to what.
      reply.header('x-stt-model', out.model);
      return out.result;
    },
  );

  app.post(
    '/v1/transcribe/async',
    {
      schema: {
        tags,
        summary: 'Start an asynchronous transcription job',
        description: uploadDoc,
        response: { 202: TranscriptionJob.pick({ id: true, status: true, createdAt: true }) },
      },
      config: { idempotent: true },
    },
    async (req, reply) => reply.code(202).send(await submitTranscriptionJob(infra, req, await readSpeechRequest(req))),
  );

  app.get(
    '/v1/transcribe/:jobId',
    { schema: { tags, summary: 'Get a transcription job', params: JobIdParams, response: { 200: TranscriptionJob } } },
    async (req) => {
      const { job, provider } = await getTranscription(infra, req.auth.developerId, req.params.jobId);
      // The engine that took the job, as on the synchronous route (was "none" on every read).
      req.providerUsed = provider;
      return job;
    },
  );

  // --- OpenAI-compatible audio API -------------------------------------------------------------------------

  app.post(
    '/v1/audio/speech',
    {
      schema: {
        tags: ['OpenAI-compatible audio'],
        summary: 'Create speech (OpenAI audio.speech)',
        body: OpenAiSpeechBody,
      },
      config: { idempotent: true },
    },
    async (req, reply) => {
      const b = req.body;
      const { provider, model } = resolveModel('tts', b.model);
      const out = await synthesizeStream(
        infra,
        req,
        {
          provider,
          model,
          text: b.input,
          voiceId: voiceFor(provider, b.voice),
          speed: b.speed,
          pitch: 1,
          format: b.response_format,
          outputRate: b.response_format === 'pcm' ? 24000 : undefined,
          operation: 'audio.speech',
          textParam: 'input',
        },
        clientSignal(reply),
      );
      if (b.stream_format === 'sse') {
        const chars = b.input.length;
        async function* events(): AsyncGenerator<string> {
          for await (const chunk of out.body)
            yield sse({ type: 'speech.audio.delta', audio: chunk.toString('base64') });
          // The local engines have no tokens: usage counts input characters (what the request is metered by).
          yield sse({
            type: 'speech.audio.done',
            usage: { input_tokens: chars, output_tokens: 0, total_tokens: chars },
          });
        }
        return reply
          .header('content-type', 'text/event-stream; charset=utf-8')
          .header('cache-control', 'no-cache')
          .send(Readable.from(events()));
      }
      return reply.header('content-type', out.contentType).send(Readable.from(out.body));
    },
  );

  app.post(
    '/v1/audio/transcriptions',
    {
      schema: {
        tags: ['OpenAI-compatible audio'],
        summary: 'Create a transcription (OpenAI audio.transcriptions; multipart, file ≤ 25 MB)',
      },
      config: { idempotent: true },
    },
    async (req, reply) => openAiTranscription(req, reply),
  );

  app.get(
    '/v1/audio/models',
    { schema: { tags: ['OpenAI-compatible audio'], summary: 'List the audio models (TTS and STT)' } },
    async () => {
      const engines = infra.engines;
      return audioModels(engines.tts.providers(), engines.stt.providers());
    },
  );

  async function openAiTranscription(req: FastifyRequest, reply: FastifyReply) {
    if (!req.isMultipart()) {
      throw new ApiError('unsupported_media_type', {
        detail: 'Send multipart/form-data with the audio as "file" (as the OpenAI SDK does).',
      });
    }
    const input = await readSpeechRequest(req);
    const f = parseInput(OpenAiTranscriptionFields, input.fields);
    if (!input.file) throw ApiError.validation('file: the audio file is required', 'file');
    assertLooksLikeMedia(input.file.buffer, 'file');
    const { provider } = resolveModel('stt', f.model);
    const granularities = f['timestamp_granularities[]'];
    if (granularities.length && f.response_format !== 'verbose_json') {
      throw ApiError.validation(
        'timestamp_granularities[] needs response_format "verbose_json"',
        'timestamp_granularities',
      );
    }
    const signal = clientSignal(reply);
    const call: TranscribeCall = {
      developerId: req.auth.developerId,
      requestId: req.id,
      headers: req.headers,
      options: {
        language: f.language,
        mode: 'accurate',
        diarize: false,
        timestamps: granularities.includes('word') ? 'word' : 'segment',
        provider: provider as never,
      },
      audio: input.file.buffer,
      param: 'file',
      operation: 'audio.transcriptions',
      prompt: f.prompt,
      signal,
      maxSeconds: syncMaxSeconds(infra, provider),
      refuseLonger: true,
    };
    if (f.stream) {
      const stream = await transcribeAudioIncremental(infra, call);
      req.providerUsed = stream.provider;
      req.usageBypassed = !stream.billable;
      const events = transcriptionSse(stream.events, { signal, requestId: req.id, log: req.log });
      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache')
        .send(Readable.from(events));
    }
    const out = await transcribeAudio(infra, call);
    req.providerUsed = out.provider;
    req.usageBypassed = !out.billable;
    const r = out.result;
    switch (f.response_format) {
      case 'text':
        return reply.type('text/plain; charset=utf-8').send(`${r.text}\n`);
      case 'srt':
        return reply.type('application/x-subrip; charset=utf-8').send(toSrt(r));
      case 'vtt':
        return reply.type('text/vtt; charset=utf-8').send(toVtt(r));
      case 'verbose_json':
        return verboseJson(r, granularities);
      default:
        return { text: toContractResult(r).text, usage: { type: 'duration', seconds: Math.ceil(r.duration) } };
    }
  }
};
