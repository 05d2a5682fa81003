/** Job kinds whose holds are keyed by the job (one hold per job whatever its retries) and swept at its end. */
export type HeldJobKind = 'transcription' | 'video';

export function jobHoldKey(kind: HeldJobKind, jobId: string): string {
  return `${kind}:${jobId}`;
}

export function parseJobHoldKey(key: string): { kind: HeldJobKind; jobId: string } | null {
  const m = /^(transcription|video):(.+)$/.exec(key);
  return m ? { kind: m[1] as HeldJobKind, jobId: m[2]! } : null;
}
