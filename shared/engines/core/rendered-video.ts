/**
 * What every video-producing engine (avatar, lip-sync, generation, model servers) returns and declares. Kept in
 * engines/core so the shared model-server client and each capability depend on core, not on one another.
 */

/** A rendered MP4 at the request's `outPath`. */
export interface RenderedVideo {
  durationSeconds: number;
  width: number;
  height: number;
  /** What produced it, as the job's result.provider shows it (e.g. `default:classical-warp`). */
  provider: string;
}

export interface VideoEngineCapabilities {
  /** Runs on this service's own hardware (GPU pool) and is billed per generated second. */
  selfHosted: boolean;
  requiresKey: boolean;
}
