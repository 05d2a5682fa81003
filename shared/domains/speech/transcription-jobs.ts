import { TranscribeOptions } from '../../contracts/speech.ts';
import { withTransaction } from '../../kernel/db/pool.ts';
import {
  completeTranscriptionJob,
  failTranscriptionJob,
  insertTranscriptionJob,
  loadTranscriptionJob,
  setTranscriptionProgress,
  type TranscriptionJobRow,
  type TranscriptionSource,
} from './transcription-store.ts';
import { jobHoldKey } from '../../platform/metering/hold-keys.ts';
import { isApiError } from '../../kernel/errors/api-error.ts';
import { engineToApiError } from '../../kernel/errors/engine-error.ts';
import { isTransientDependencyError } from '../../kernel/errors/retry.ts';
import { newId } from '../../kernel/ids.ts';
import type { JobContext } from '../../kernel/queue/worker-runner.ts';
import type { Infra } from '../../platform/infra.ts';
import { objectKey } from '../../kernel/storage/keys.ts';
import { eraseTranscriptionKey, sealTranscriptionKey, transcriptionKeyHeaders } from './job-keys.ts';
import { resolveProviderKey, type ProviderKeyHeaders } from '../../platform/keys/provider-key.ts';
import { fetchAudioUrl, isPermanentFailure, sttEngineFor, toContractResult, transcribeAudio } from './transcription.ts';

export interface TranscriptionSubmission {
  developerId: string;
  requestId: string;
  headers: ProviderKeyHeaders;
  options: TranscribeOptions;
  /** The uploaded audio, or null when options.audioUrl names it. */
  file: { buffer: Buffer; mimetype: string } | null;
}

/**
 * An asynchronous transcription: the language/provider check and the key resolution run now, so an impossible
 * request is a 400 and not a failed job. An uploaded file goes to S3 first; then the row, the caller's header key
 * (sealed, when the engine is keyed and the caller sent one) and the queue job.
 */
export async function submitTranscription(
  infra: Infra,
  s: TranscriptionSubmission,
): Promise<{ row: TranscriptionJobRow; provider: string; billable: boolean }> {
  const engine = sttEngineFor(infra, s.options);
  const key = await resolveProviderKey(infra, { engine, developerId: s.developerId, headers: s.headers });
  const id = newId('job');
  let source: TranscriptionSource;
  if (s.file) {
    const s3Key = objectKey(s.developerId, 'uploads', id, 'audio');
    await infra.storage.put(s3Key, s.file.buffer, s.file.mimetype || 'application/octet-stream');
    source = { kind: 'upload', key: s3Key };
  } else {
    source = { kind: 'url', url: s.options.audioUrl! };
  }
  const { audioUrl: _url, ...opts } = s.options;
  const row = await withTransaction(infra.db, async (tx) => {
    const inserted = await insertTranscriptionJob(tx, {
      id,
      developer_id: s.developerId,
      provider: engine.provider,
      options: opts,
      source,
      request_id: s.requestId,
    });
    // The job runs after this request is gone: a key the caller sent in a header travels with it, sealed.
    if (key?.source === 'header') {
      await sealTranscriptionKey(tx, infra.config, { id, developerId: s.developerId }, engine.provider, key.key);
    }
    return inserted;
  });
  await infra.queues.enqueue('speech.transcribe', { transcriptionJobId: id }, { jobId: id });
  return { row, provider: engine.provider, billable: key ? key.billable : true };
}

/**
 * The `speech.transcribe` job: reads its row, loads the audio (the uploaded S3 object or the caller's URL,
 * fetched SSRF-safely), transcribes (metered in audio seconds) on the caller's sealed key when one came with the
 * job, and writes the result. Bad input (undecodable audio, a URL that fails, too little credit) fails the job at
 * once with the API error code; other failures retry and mark the job failed on the last attempt. A job already
 * finished is not run again.
 */
export async function runTranscriptionJob(
  infra: Infra,
  jobId: string,
  ctx: Pick<JobContext, 'signal' | 'attempt' | 'attemptsAllowed' | 'log'>,
): Promise<{ skipped: true } | { completed: true } | { failed: true }> {
  const row = await loadTranscriptionJob(infra.db, jobId);
  if (!row || row.status !== 'processing') return { skipped: true };
  try {
    const options = TranscribeOptions.parse(row.options);
    const audio =
      row.source.kind === 'upload'
        ? await infra.storage.getBuffer(row.source.key)
        : await fetchAudioUrl(infra, row.source.url, ctx.signal);
    const progress = progressWriter(infra, row.id, ctx.log);
    const out = await transcribeAudio(
      infra,
      {
        developerId: row.developer_id,
        requestId: row.id,
        headers: await transcriptionKeyHeaders(infra, { id: row.id, developerId: row.developer_id }),
        options,
        audio,
        param: row.source.kind === 'upload' ? 'file' : 'audioUrl',
        operation: 'transcribe',
        signal: ctx.signal,
        maxSeconds: infra.config.SPEECH_MAX_AUDIO_SECONDS,
        holdKey: jobHoldKey('transcription', row.id),
      },
      progress,
    );
    await withTransaction(infra.db, async (tx) => {
      await completeTranscriptionJob(tx, row.id, toContractResult(out.result), out.result.duration);
      await eraseTranscriptionKey(tx, row.id);
    });
    await dropUpload(infra, row.source);
    return { completed: true };
  } catch (e) {
    // Postgres, Redis or S3 briefly gone is never the job's fault: retry, and past the last attempt the
    // reconciler puts the job back on the queue.
    if (isTransientDependencyError(e)) throw e;
    const last = ctx.attempt >= ctx.attemptsAllowed;
    if (!isPermanentFailure(e) && !last) throw e;
    const failure = engineToApiError(e);
    await withTransaction(infra.db, async (tx) => {
      await failTranscriptionJob(tx, row.id, {
        code: isApiError(failure) ? failure.code : 'transcription_failed',
        message: isApiError(failure) ? failure.message : 'The transcription failed; retry the request.',
      });
      await eraseTranscriptionKey(tx, row.id);
    });
    ctx.log.warn({ code: (e as { code?: string }).code, attempt: ctx.attempt }, 'transcription job failed');
    await dropUpload(infra, row.source);
    return { failed: true };
  }
}

/** How often a job writes its progress at most: a decoder reports every utterance, the row needs far fewer. */
const PROGRESS_EVERY_MS = 2000;

/** Writes a job's progress (`progress: {doneSeconds, totalSeconds}`), at most every PROGRESS_EVERY_MS, never failing it. */
function progressWriter(infra: Infra, id: string, log: JobContext['log']) {
  let last = 0;
  return (doneSeconds: number, totalSeconds: number) => {
    const now = Date.now();
    if (now - last < PROGRESS_EVERY_MS) return;
    last = now;
    const round = (v: number) => Math.round(v * 10) / 10;
    setTranscriptionProgress(infra.db, id, {
      doneSeconds: round(doneSeconds),
      totalSeconds: round(totalSeconds),
    }).catch((e: Error) => log.warn({ err: e.message }, 'transcription progress not written'));
  };
}

/** The uploaded audio is only kept until the job has an outcome: transcripts live in Postgres, not the audio. */
async function dropUpload(infra: Infra, source: TranscriptionSource): Promise<void> {
  if (source.kind === 'upload') await infra.storage.delete(source.key).catch(() => {});
}
