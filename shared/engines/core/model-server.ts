import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { RenderedVideo } from './rendered-video.ts';
import type { EngineError } from '../../kernel/errors/engine-error.ts';
import { responseBytes, vendorFetch } from './vendor-client.ts';
import { probeMedia } from '../../kernel/media/probe.ts';

export type ModelServerKind = 'avatar' | 'lipsync' | 'generate' | 'analyze';

/**
 * The model-server contract every self-hosted neural engine on a GPU node speaks (docs/video.md):
 *   GET  {base}/health            → 200 {"status":"ok","kind":"avatar","model":"sadtalker-256"}
 *   POST {base}/v1/{kind}  JSON   {"inputs":{"image_url"|"audio_url"|"video_url": presigned URL}, "params":{…}}
 *        → 200 video/mp4 (the rendered clip; X-Duration-Seconds, X-Width, X-Height headers), or for `analyze`
 *          200 application/json (the analyze sections); 4xx {"error":{"message"}} = permanent, 5xx = retry.
 */
export interface ModelServer {
  kind: ModelServerKind;
  provider: string;
  url: string;
}

/**
 * Parses VIDEO_MODEL_SERVERS: "avatar:sadtalker=http://gpu-1:9000,lipsync:wav2lip=http://gpu-2:9000". A
 * malformed entry, a provider listed twice for one kind, or one named `default` (the local engine's name) is an
 * error, raised when the engines are built at start-up.
 */
export function parseModelServers(spec: string): ModelServer[] {
  const seen = new Set<string>();
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = /^(avatar|lipsync|generate|analyze):([a-z0-9_-]+)=(https?:\/\/\S+)$/.exec(entry);
      if (!m) throw new Error(`VIDEO_MODEL_SERVERS entry "${entry}" is not kind:provider=http(s)://host[:port]`);
      const [, kind, provider, url] = m as unknown as [string, ModelServerKind, string, string];
      if (!URL.canParse(url)) throw new Error(`VIDEO_MODEL_SERVERS entry "${entry}": "${url}" is not a URL`);
      if (provider === 'default') {
        throw new Error(`VIDEO_MODEL_SERVERS entry "${entry}": "default" names the local engine; pick another name`);
      }
      if (seen.has(`${kind}:${provider}`)) {
        throw new Error(`VIDEO_MODEL_SERVERS lists ${kind}:${provider} twice`);
      }
      seen.add(`${kind}:${provider}`);
      return { kind, provider, url: url.replace(/\/$/, '') };
    });
}

const health = new Map<string, { ok: boolean; detail: string; at: number }>();

/** Health check, cached for 10 s: a submission to an unhealthy server is refused (provider_unavailable). */
export async function checkModelServer(server: ModelServer): Promise<{ ok: boolean; detail: string }> {
  const cached = health.get(server.url);
  if (cached && Date.now() - cached.at < 10_000) return cached;
  let result: { ok: boolean; detail: string };
  try {
    const res = await vendorFetch(server.provider, `${server.url}/health`, { headersTimeoutMs: 2000, attempts: 1 });
    const body = (await res.json().catch(() => ({}))) as { status?: string };
    result = body.status === 'ok' ? { ok: true, detail: 'ok' } : { ok: false, detail: `health answered ${res.status}` };
  } catch (e) {
    const status = (e as EngineError).status;
    result = { ok: false, detail: status ? `health answered ${status}` : `unreachable (${(e as Error).message})` };
  }
  health.set(server.url, { ...result, at: Date.now() });
  return result;
}

/** Calls a model server; writes the MP4 it returns to `outPath` (or returns the JSON body for analyze). */
export async function callModelServer(
  server: ModelServer,
  body: { inputs: Record<string, string>; params: Record<string, unknown> },
  outPath: string | null,
  signal: AbortSignal,
): Promise<{ headers: Headers; json?: unknown }> {
  // A render answers when the video is done: no header deadline but the job's own signal.
  const res = await vendorFetch(server.provider, `${server.url}/v1/${server.kind}`, {
    json: body,
    signal,
    headersTimeoutMs: Infinity,
  });
  if (!outPath) return { headers: res.headers, json: await res.json() };
  await pipeline(Readable.from(responseBytes(server.provider, res)), createWriteStream(outPath), { signal });
  return { headers: res.headers };
}

/**
 * Renders a video on a model server into `outPath` and describes it from the file itself (duration and size as
 * ffprobe sees them; the fallbacks apply only when the file carries no video stream size).
 */
export async function renderOnModelServer(
  server: ModelServer,
  body: { inputs: Record<string, string>; params: Record<string, unknown> },
  outPath: string,
  signal: AbortSignal,
  fallbackSize: { width: number; height: number } = { width: 0, height: 0 },
): Promise<RenderedVideo> {
  await callModelServer(server, body, outPath, signal);
  const info = await probeMedia(outPath, signal);
  return {
    durationSeconds: info.durationSeconds,
    width: info.video?.width ?? fallbackSize.width,
    height: info.video?.height ?? fallbackSize.height,
    provider: server.provider,
  };
}

interface ModelServerEngine {
  readonly server: ModelServer;
  readonly provider: string;
  readonly label: string;
  readonly capabilities: { selfHosted: true; requiresKey: false };
}

/**
 * The one template of a model-server adapter: `class X extends onModelServer(AvatarEngine) { _render… }` is an
 * engine of the capability's base class, named by its server (`<provider>:model-server`), self-hosted and keyless;
 * the adapter writes only the call (the inputs and params the capability sends, via renderOnModelServer or
 * callModelServer).
 */
export function onModelServer<T extends object>(Base: abstract new () => T) {
  abstract class OnModelServer extends (Base as abstract new () => object) implements ModelServerEngine {
    readonly capabilities = { selfHosted: true, requiresKey: false } as const;
    readonly label: string;
    constructor(readonly server: ModelServer) {
      super();
      this.label = `${server.provider}:model-server`;
    }
    get provider(): string {
      return this.server.provider;
    }
  }
  return OnModelServer as unknown as abstract new (server: ModelServer) => T & ModelServerEngine;
}
