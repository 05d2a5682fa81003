/** Job kinds whose holds are keyed by the job (one hold per job whatever its retries) and swept at its end. */
export type HeldJobKind = 'transcription' | 'video';

export function jobHoldKey(kind: HeldJobKind, jobId: string): string {
  return `${kind}:${jobId}`;
}
