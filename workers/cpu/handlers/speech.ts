import type { JobsOn } from '../../../shared/queue/catalog.ts';
import type { speechJobs } from '../../../shared/queue/jobs/speech.ts';
import type { HandlerMap } from '../../../shared/queue/worker-runner.ts';
import type { Infra } from '../../../shared/runtime/infra.ts';
import { runTranscriptionJob } from '../../../shared/speech/transcription-jobs.ts';

type Names = Extract<keyof typeof speechJobs, JobsOn<'cpu'>>;

/** CPU handlers of the speech area: asynchronous transcriptions (shared/speech/transcription-jobs.ts). */
export function speechCpuHandlers(infra: Infra): HandlerMap<Names> {
  return {
    'speech.transcribe': ({ transcriptionJobId }, ctx) => runTranscriptionJob(infra, transcriptionJobId, ctx),
  };
}
