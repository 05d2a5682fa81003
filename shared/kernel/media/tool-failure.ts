/**
 * How a media tool (ffmpeg, ffprobe, tesseract) or its output failed, in no domain's terms: the input could not be
 * decoded (`unreadable`, permanent), the tool could not start (`unavailable`, retryable), or it failed on an input
 * it should have read (`failed`, retryable). Each domain maps it to its own error (domains/video/failure.ts).
 * Recognised by `name` across process boundaries.
 */
export type ToolFailureKind = 'unreadable' | 'unavailable' | 'failed';

export class ToolFailure extends Error {
  override name = 'ToolFailure';
  readonly retryable: boolean;
  constructor(
    readonly kind: ToolFailureKind,
    message: string,
  ) {
    super(message);
    this.retryable = kind !== 'unreadable';
  }
}

export function isToolFailure(e: unknown): e is ToolFailure {
  return e instanceof ToolFailure || (e instanceof Error && e.name === 'ToolFailure' && 'kind' in e);
}
