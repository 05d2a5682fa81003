import { probeMedia } from '../../kernel/media/probe.ts';
import { vendorDescriptor, type VendorId } from '../../kernel/vendors.ts';
import type { RenderedVideo } from './rendered-video.ts';
import { downloadVendorFile, pollVendor, trimSlash, vendorJson, type VendorRequest } from './vendor-client.ts';

/** How an async video vendor's adapter is configured: its API (env `<VENDOR>_BASE_URL`) and its poll interval. */
export interface AsyncVideoVendorOptions {
  baseUrl?: string;
  /** How long to wait between two status reads of a job (VIDEO_VENDOR_POLL_MS). */
  pollMs?: number;
}

/** One status read of a submitted job: the output when it is done, null while it runs; throws when it failed. */
export type JobOutcome<Status, Out = string> = (status: Status) => Out | null;

interface Call {
  headers: Record<string, string>;
  signal: AbortSignal;
}

/**
 * The one submit → poll → download template of the async video vendors (HeyGen, Sync Labs, Replicate lip-sync,
 * Runway, Luma, Twelve Labs): every call goes through the vendor client (deadlines, retries, EngineError
 * mapping); a job is polled every `pollMs` until done, abortable; the output is streamed to the job's folder and
 * probed, so the rendered video reports what the file holds.
 */
export class AsyncVideoVendor {
  readonly base: string;
  readonly pollMs: number;
  constructor(
    readonly provider: string,
    opts: AsyncVideoVendorOptions,
    defaultBaseUrl: string,
  ) {
    this.base = trimSlash(opts.baseUrl ?? defaultBaseUrl);
    this.pollMs = opts.pollMs ?? 5000;
  }

  /** A JSON call to `path` under the base URL (or to an absolute URL). */
  json<T>(path: string, call: Call & Omit<VendorRequest, 'headers' | 'signal'>): Promise<T> {
    return vendorJson<T>(this.provider, path.startsWith('http') ? path : `${this.base}${path}`, call);
  }

  /** Reads `statusPath` until `outcome` gives the job's output. `onWait(n)` runs before the n-th wait. */
  poll<Status, Out = string>(
    statusPath: string,
    outcome: JobOutcome<Status, Out>,
    call: Call & { onWait?: (n: number) => void },
  ): Promise<Out> {
    const { onWait, ...read } = call;
    return pollVendor(async () => outcome(await this.json<Status>(statusPath, read)), {
      intervalMs: this.pollMs,
      signal: call.signal,
      onWait,
    });
  }

  /** Downloads the vendor's output to `outPath` and reads what it holds (`size` when the file does not say). */
  async download(
    url: string,
    out: { outPath: string; signal: AbortSignal; label: string; size: { width: number; height: number } },
  ): Promise<RenderedVideo> {
    await downloadVendorFile(this.provider, url, out.outPath, out.signal);
    const info = await probeMedia(out.outPath, out.signal);
    return {
      durationSeconds: info.durationSeconds,
      width: info.video?.width ?? out.size.width,
      height: info.video?.height ?? out.size.height,
      provider: out.label,
    };
  }

  /** Submit → poll → download: posts the job to `submitPath`, polls `statusPath(id)`, downloads its output. */
  async render<Status>(job: {
    call: Call;
    submitPath: string;
    submit: unknown;
    statusPath: (id: string) => string;
    outcome: JobOutcome<Status>;
    out: { outPath: string; label: string; size: { width: number; height: number } };
  }): Promise<RenderedVideo> {
    const { call } = job;
    const created = await this.json<{ id: string }>(job.submitPath, { ...call, json: job.submit });
    const url = await this.poll(job.statusPath(encodeURIComponent(created.id)), job.outcome, call);
    return this.download(url, { ...job.out, signal: call.signal });
  }
}

interface AsyncVideoAdapter {
  readonly provider: string;
  readonly capabilities: { selfHosted: false; requiresKey: true };
  readonly vendor: AsyncVideoVendor;
}

/**
 * The one template of an async video vendor's adapter: `class X extends onAsyncVideoVendor(LipsyncEngine,
 * 'synclabs') { label…; _sync… }` is an engine of the capability's base class for that vendor of the vendor table
 * (kernel/vendors.ts: its default base URL), commercial and keyed, with `this.vendor` for submit → poll → download.
 */
export function onAsyncVideoVendor<T extends object>(Base: abstract new () => T, provider: VendorId) {
  const defaultBaseUrl = vendorDescriptor(provider)?.baseUrl;
  if (!defaultBaseUrl) throw new Error(`${provider}: the vendor table gives no base URL`);
  abstract class OnAsyncVideoVendor extends (Base as abstract new () => object) implements AsyncVideoAdapter {
    readonly provider = provider;
    readonly capabilities = { selfHosted: false, requiresKey: true } as const;
    readonly vendor: AsyncVideoVendor;
    constructor(opts: AsyncVideoVendorOptions = {}) {
      super();
      this.vendor = new AsyncVideoVendor(provider, opts, defaultBaseUrl!);
    }
  }
  return OnAsyncVideoVendor as unknown as abstract new (opts?: AsyncVideoVendorOptions) => T & AsyncVideoAdapter;
}
