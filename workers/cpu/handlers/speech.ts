import type { JobsOn } from '../../../shared/kernel/queue/catalog.ts';
import type { speechJobs } from '../../../shared/kernel/queue/jobs/speech.ts';
import type { HandlerMap } from '../../../shared/kernel/queue/worker-runner.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import { runTranscriptionJob } from '../../../shared/domains/speech/transcription-jobs.ts';

type Names = Extract<keyof typeof speechJobs, JobsOn<'cpu'>>;

/** CPU handlers of the speech area: asynchronous transcriptions (shared/domains/speech/transcription-jobs.ts). */
export function speechCpuHandlers(infra: Infra): HandlerMap<Names> {
  return {
    'speech.transcribe': ({ transcriptionJobId }, ctx) => runTranscriptionJob(infra, transcriptionJobId, ctx),
  };
}
