import { z } from 'zod';
import type { JobDefinition } from '../define.ts';

/**
 * Jobs of the speech area. The payload is only the transcription_jobs row id: input and options live in the row,
 * and the BullMQ job id is the row id, so enqueueing twice runs once.
 */
export const speechJobs = {
  'speech.transcribe': {
    schema: z.object({ transcriptionJobId: z.string().min(1) }),
    queue: 'cpu' as const,
    timeoutMs: 60 * 60_000,
    attempts: 3,
    backoffMs: 5000,
  },
} satisfies Record<string, JobDefinition>;
