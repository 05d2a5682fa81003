import { jobHoldKey } from '../../../shared/billing/hold-keys.ts';
import { TranscribeOptions } from '../../../shared/contracts/speech.ts';
import {
  completeTranscriptionJob,
  failTranscriptionJob,
  loadTranscriptionJob,
  type TranscriptionSource,
} from '../../../shared/db/transcription-jobs.ts';
import { isApiError } from '../../../shared/errors/api-error.ts';
import { isTransientDependencyError } from '../../../shared/errors/retry.ts';
import type { JobsOn } from '../../../shared/queue/catalog.ts';
import type { speechJobs } from '../../../shared/queue/jobs/speech.ts';
import type { HandlerMap } from '../../../shared/queue/worker-runner.ts';
import type { Infra } from '../../../shared/runtime/infra.ts';
import {
  fetchAudioUrl,
  isPermanentFailure,
  toContractResult,
  transcribeAudio,
} from '../../../api/services/transcription.ts';

type Names = Extract<keyof typeof speechJobs, JobsOn<'cpu'>>;

/**
 * CPU handlers of the speech area. `speech.transcribe` reads its row, loads the audio (the uploaded S3 object or
 * the caller's URL, fetched SSRF-safely), transcribes (metered in audio seconds) and writes the result. Bad input
 * (undecodable audio, a URL that fails, too little credit) fails the job at once with the API error code; other
 * failures retry and mark the job failed on the last attempt. A job already finished is not run again.
 */
export function speechCpuHandlers(infra: Infra): HandlerMap<Names> {
  return {
    'speech.transcribe': async ({ transcriptionJobId }, ctx) => {
      const row = await loadTranscriptionJob(infra.db, transcriptionJobId);
      if (!row || row.status !== 'processing') return { skipped: true };
      try {
        const options = TranscribeOptions.parse(row.options);
        const audio =
          row.source.kind === 'upload'
            ? await infra.storage.getBuffer(row.source.key)
            : await fetchAudioUrl(infra, row.source.url, ctx.signal);
        const out = await transcribeAudio(infra, {
          developerId: row.developer_id,
          requestId: row.id,
          headers: {},
          options,
          audio,
          param: row.source.kind === 'upload' ? 'file' : 'audioUrl',
          operation: 'transcribe',
          signal: ctx.signal,
          maxSeconds: infra.config.SPEECH_MAX_AUDIO_SECONDS,
          holdKey: jobHoldKey('transcription', row.id),
        });
        await completeTranscriptionJob(infra.db, row.id, toContractResult(out.result), out.result.duration);
        await dropUpload(infra, row.source);
        return { completed: true };
      } catch (e) {
        // Postgres, Redis or S3 briefly gone is never the job's fault: retry, and past the last attempt the
        // reconciler puts the job back on the queue.
        if (isTransientDependencyError(e)) throw e;
        const last = ctx.attempt >= ctx.attemptsAllowed;
        if (isPermanentFailure(e) || last) {
          const err = e as Error & { code?: string };
          await failTranscriptionJob(infra.db, row.id, {
            code: isApiError(e) ? e.code : 'transcription_failed',
            message: isApiError(e) ? e.message : 'The transcription failed; retry the request.',
          });
          ctx.log.warn({ code: err.code, attempt: ctx.attempt }, 'transcription job failed');
          await dropUpload(infra, row.source);
          return { failed: true };
        }
        throw e;
      }
    },
  };
}

/** The uploaded audio is only kept until the job has an outcome: transcripts live in Postgres, not the audio. */
async function dropUpload(infra: Infra, source: TranscriptionSource): Promise<void> {
  if (source.kind === 'upload') await infra.storage.delete(source.key).catch(() => {});
}
