import { mkdirSync } from 'node:fs';
import { open, readdir, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wavHeader } from '../../../../shared/kernel/audio/wav.ts';
import { objectKey } from '../../../../shared/kernel/storage/keys.ts';
import type { Logger } from '../../../../shared/kernel/observability/logger.ts';
import type { Infra } from '../../../../shared/platform/infra.ts';

/** Audio kept in memory before the settled part goes to disk: a call holds ~320 KB, not its whole length. */
const SPILL_SECONDS = 10;

const SPILL_SUFFIX = '.wav.part';
const made = new Set<string>();

/**
 * Where recordings are written while calls go on: the temp dir (an emptyDir volume in k8s), one folder per
 * deployment (`scope`, the Redis prefix) so that platforms sharing a machine never touch each other's files.
 */
export function recordingSpillDir(scope: string): string {
  const dir = join(tmpdir(), 'vap-recordings', scope.replace(/[^A-Za-z0-9_-]+/g, '_') || 'default');
  if (!made.has(dir)) {
    mkdirSync(dir, { recursive: true });
    made.add(dir);
  }
  return dir;
}

export function recordingSpillPath(scope: string, sessionId: string): string {
  return join(recordingSpillDir(scope), `${sessionId}${SPILL_SUFFIX}`);
}

/** Where a session's recording is stored in S3. */
export function recordingObjectKey(developerId: string, sessionId: string): string {
  return objectKey(developerId, 'recordings', `${sessionId}.wav`);
}

/** Spill files in the directory, by session id. */
export async function listSpillFiles(scope: string): Promise<Array<{ sessionId: string; path: string }>> {
  const dir = recordingSpillDir(scope);
  return (await readdir(dir))
    .filter((f) => f.endsWith(SPILL_SUFFIX))
    .map((f) => ({ sessionId: f.slice(0, -SPILL_SUFFIX.length), path: join(dir, f) }));
}

/**
 * Turns a spill file whose session never finished (its process died) into a complete WAV: the sizes in the header
 * are set from the file's length, a frame cut short by the crash is dropped. Returns its length, or null when the
 * file holds no audio (or no header: the process died before the first spill was written).
 */
export async function recoverSpillFile(path: string): Promise<{ durationMs: number; bytes: number } | null> {
  const fh = await open(path, 'r+');
  try {
    const head = Buffer.alloc(44);
    const { size } = await fh.stat();
    if (size <= 44 || (await fh.read(head, 0, 44, 0)).bytesRead < 44 || head.toString('ascii', 0, 4) !== 'RIFF')
      return null;
    const rate = head.readUInt32LE(24);
    const data = Math.floor((size - 44) / 4) * 4;
    await fh.truncate(44 + data);
    await fh.write(wavHeader({ sampleRate: rate, channels: 2, bitsPerSample: 16 }, data), 0, 44, 0);
    return { durationMs: Math.round((data / 4 / rate) * 1000), bytes: 44 + data };
  } finally {
    await fh.close();
  }
}

/** A growable Int16 buffer of samples from `base` (an absolute sample index) on. */
class Track {
  data: Int16Array;
  length = 0;
  constructor(size: number) {
    this.data = new Int16Array(size);
  }
  ensure(n: number): void {
    if (n <= this.data.length) return;
    let size = this.data.length;
    while (size < n) size *= 2;
    const next = new Int16Array(size);
    next.set(this.data.subarray(0, this.length));
    this.data = next;
  }
}

/**
 * Both sides of a call on one timeline: left = caller, right = agent, at one sample rate. The caller's audio
 * is the clock (it arrives in real time); agent audio is laid down where it starts playing (after what is already
 * queued, never before "now"), and a barge-in cuts the agent's channel back to "now", since the flushed audio was
 * never heard. Capped at `maxSeconds`.
 *
 * Everything before "now" is settled (neither side can change it), so it is interleaved and appended to a file
 * every SPILL_SECONDS; memory holds only the last seconds and the agent audio queued ahead. `finish` writes the
 * WAV header over the 44 bytes reserved at the start and returns the file to upload.
 */
export class StereoRecorder {
  private readonly caller: Track;
  private readonly agent: Track;
  /** Absolute sample index of the tracks' first sample (what is before it is on disk). */
  private base = 0;
  private agentCursor = 0;
  private readonly max: number;
  private file: Promise<FileHandle> | null = null;
  /** Appends run one after another; the first failure is kept and reported by `finish`. */
  private writing: Promise<void> = Promise.resolve();
  private failed: Error | null = null;
  private written = 0;

  constructor(
    readonly sampleRate: number,
    maxSeconds: number,
    /** The spill file; it is created on the first spill and removed by `discard` (or by the caller after upload). */
    readonly path: string,
  ) {
    this.max = sampleRate * maxSeconds;
    this.caller = new Track(sampleRate * SPILL_SECONDS * 1.5);
    this.agent = new Track(sampleRate * SPILL_SECONDS * 1.5);
  }

  /** Absolute samples of the caller's side so far ("now" on the recording's clock). */
  private get now(): number {
    return this.base + this.caller.length;
  }

  get durationMs(): number {
    return Math.round((Math.max(this.now, this.base + this.agent.length) / this.sampleRate) * 1000);
  }

  addCaller(samples: Int16Array): void {
    const n = Math.min(samples.length, this.max - this.now);
    if (n <= 0) return;
    this.caller.ensure(this.caller.length + n);
    this.caller.data.set(samples.subarray(0, n), this.caller.length);
    this.caller.length += n;
    if (this.caller.length >= this.sampleRate * SPILL_SECONDS) this.spill(this.caller.length);
  }

  addAgent(samples: Int16Array): void {
    const start = Math.max(this.agentCursor, this.now) - this.base;
    const n = Math.min(samples.length, this.max - this.base - start);
    if (n <= 0) return;
    this.agent.ensure(start + n);
    if (start > this.agent.length) this.agent.data.fill(0, this.agent.length, start);
    this.agent.data.set(samples.subarray(0, n), start);
    this.agent.length = Math.max(this.agent.length, start + n);
    this.agentCursor = this.base + start + n;
  }

  /** Barge-in: agent audio after "now" was flushed and never played. */
  cutAgent(): void {
    if (this.agentCursor <= this.now) return;
    const now = this.caller.length;
    this.agent.data.fill(0, now, this.agentCursor - this.base);
    this.agent.length = Math.min(this.agent.length, now);
    this.agentCursor = this.now;
  }

  /**
   * Writes what is left, then the header, and closes the file: returns its path and size, or null when nothing
   * was recorded. Throws when a write failed (the recording is incomplete).
   */
  async finish(): Promise<{ path: string; bytes: number } | null> {
    const total = Math.max(this.caller.length, this.agent.length);
    if (this.base === 0 && total === 0) return null;
    this.spill(total);
    await this.writing;
    const fh = await this.fileHandle();
    try {
      if (this.failed) throw this.failed;
      await fh.write(
        wavHeader({ sampleRate: this.sampleRate, channels: 2, bitsPerSample: 16 }, this.written),
        0,
        44,
        0,
      );
    } finally {
      await fh.close();
    }
    return { path: this.path, bytes: 44 + this.written };
  }

  /** Resolves once what has been spilled so far is written. */
  async spilled(): Promise<void> {
    await this.writing;
  }

  /** Removes the spill file (after upload, or when the recording is not wanted). */
  async discard(): Promise<void> {
    await this.writing;
    if (this.file) await (await this.file.catch(() => null))?.close().catch(() => {});
    await rm(this.path, { force: true });
  }

  /** Interleaves the first `n` samples of both tracks, queues them for the file and drops them from memory. */
  private spill(n: number): void {
    if (n <= 0) return;
    const out = Buffer.alloc(n * 4);
    // Interleaved through an Int16 view (little-endian host, aligned: a fresh allocation of this size is not
    // pooled), each track's samples copied up to its length; the rest stays zero (silence).
    const lr = new Int16Array(out.buffer, out.byteOffset, n * 2);
    const c = this.caller.data;
    const a = this.agent.data;
    for (let i = 0, end = Math.min(n, this.caller.length); i < end; i++) lr[2 * i] = c[i]!;
    for (let i = 0, end = Math.min(n, this.agent.length); i < end; i++) lr[2 * i + 1] = a[i]!;
    this.caller.data.copyWithin(0, n, Math.max(n, this.caller.length));
    this.caller.length = Math.max(0, this.caller.length - n);
    this.agent.data.copyWithin(0, n, Math.max(n, this.agent.length));
    this.agent.length = Math.max(0, this.agent.length - n);
    this.base += n;
    const at = 44 + this.written;
    this.written += out.length;
    this.writing = this.writing.then(async () => {
      if (this.failed) return;
      try {
        const fh = await this.fileHandle();
        await fh.write(out, 0, out.length, at);
      } catch (e) {
        this.failed = e as Error;
      }
    });
  }

  private fileHandle(): Promise<FileHandle> {
    // The header says "size unknown" until finish() writes the real one, so a file left by a crash still reads
    // as a WAV (and recoverSpillFile can settle its sizes).
    this.file ??= open(this.path, 'w').then(async (fh) => {
      await fh.write(wavHeader({ sampleRate: this.sampleRate, channels: 2, bitsPerSample: 16 }), 0, 44, 0);
      return fh;
    });
    return this.file;
  }
}

/** Uploads a finished call's stereo WAV from its spill file; returns the object key, or null when there is none. */
export async function storeRecording(
  rec: StereoRecorder | null,
  s: { infra: Infra; developerId: string; sessionId: string; log: Logger },
): Promise<string | null> {
  if (!rec) return null;
  try {
    const file = await rec.finish();
    if (!file) return null;
    const key = recordingObjectKey(s.developerId, s.sessionId);
    await s.infra.storage.putFile(key, file.path, 'audio/wav');
    return key;
  } catch (e) {
    s.log.error({ sessionId: s.sessionId, err: (e as Error).message }, 'recording upload failed');
    return null;
  } finally {
    await rec.discard();
  }
}
