import type {
  AnalyzeVideoBody,
  AvatarVideoBody,
  DubVideoBody,
  GenerateVideoBody,
  LipsyncVideoBody,
  VideoJob,
  VideoEngine,
  VideoJobType,
} from '../../shared/contracts/video.ts';
import { withTransaction } from '../../shared/kernel/db/pool.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { newId } from '../../shared/kernel/ids.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { apertium } from '../../shared/engines/translate/apertium.ts';
import { precheckCredits } from '../../shared/domains/video/billing.ts';
import { enqueueVideoJob } from '../../shared/domains/video/enqueue.ts';
import { callerKeysFrom, sealJobKeys, type RequestHeaders } from '../../shared/domains/video/job-keys.ts';
import { checkModelServer, type ModelServerKind } from '../../shared/engines/core/model-server.ts';
import { avatarEngines, requireModelServer } from '../../shared/domains/video/engine-catalogue.ts';
import { checkDubLanguages, dubSttLanguage, dubSttProvider } from '../../shared/domains/video/dub-languages.ts';
import { toVideoJob } from '../../shared/domains/video/present.ts';
import { sttEngineFor } from '../../shared/domains/speech/transcription.ts';
import { videoTts } from '../../shared/domains/video/speech.ts';
import { getOwnedVideoJob, insertVideoJob } from '../../shared/domains/video/store.ts';
import { precheckUrl } from '../../shared/domains/video/url-check.ts';
import { VIDEO_VENDORS } from '../../shared/domains/video/vendor-keys.ts';
import { resolveProviderKey } from '../../shared/platform/keys/provider-key.ts';
import { getOrCreateEndpoint } from '../../shared/domains/webhooks/endpoints.ts';
import { requireOwnedCollection } from './ownership.ts';

export type VideoBody = GenerateVideoBody | AvatarVideoBody | LipsyncVideoBody | DubVideoBody | AnalyzeVideoBody;

const URL_FIELDS = ['image_url', 'audio_url', 'video_url', 'webhook_url'] as const;

/**
 * Accepts a video job: every provider is checked now (not configured or unhealthy → 400 provider_unavailable),
 * every URL is checked against the outbound policy (private network → 400 url_not_allowed), the credit balance
 * must cover the estimate, then the row is written (pending), with the caller's `X-Provider-Key-*` keys for the
 * vendors it calls sealed beside it, and enqueued. If Redis refuses the enqueue, the job is still accepted: the
 * reconciler enqueues it. Returns the Video job for the 202.
 */
export async function submitVideoJob(
  infra: Infra,
  input: { developerId: string; requestId: string; type: VideoJobType; body: VideoBody; headers: RequestHeaders },
): Promise<VideoJob & { billable: boolean }> {
  const { type, body, headers } = input;
  // Another developer's collection is 404 now, not an analysis that fails when it tries to store its chunks.
  const collectionId = type === 'analyze' ? (body as AnalyzeVideoBody).collectionId : undefined;
  if (collectionId) await requireOwnedCollection(infra.db, input.developerId, collectionId);
  const provider = await resolveProvider(infra, type, body, input.developerId, headers);
  // Key resolution as on synchronous routes (header → stored → platform); a caller's key is not charged.
  const vendorProvider = type === 'dub' ? (body as DubVideoBody).lipsync_provider : provider;
  const vendor = VIDEO_VENDORS[vendorProvider];
  const key = vendor && (await resolveProviderKey(infra, { ...vendor, developerId: input.developerId, headers }));
  const billable = key ? key.billable : true;
  // The job runs after this request is gone, so the header keys it will need travel with it, sealed.
  const callerKeys = callerKeysFrom(headers, [VIDEO_VENDORS[vendorProvider]?.vendor, ...speechProvidersOf(type, body)]);
  for (const f of URL_FIELDS) {
    const v = (body as Record<string, unknown>)[f];
    if (typeof v === 'string') await precheckUrl(v, infra.addressPolicy, f);
  }
  if (body.webhook_url) await getOrCreateEndpoint(infra.db, input.developerId, body.webhook_url);
  await precheckCredits(infra, {
    developerId: input.developerId,
    type,
    provider,
    billable,
    units: type === 'generate' ? (body as GenerateVideoBody).duration_seconds : 10,
    requestId: input.requestId,
  });
  // One transaction: a worker never sees the job without the keys it was accepted with.
  const row = await withTransaction(infra.db, async (tx) => {
    const inserted = await insertVideoJob(tx, {
      id: newId('job'),
      owner_id: input.developerId,
      type,
      provider,
      request: { ...body, provider },
      webhook_url: body.webhook_url ?? null,
      billable,
      request_id: input.requestId,
    });
    await sealJobKeys(tx, infra.config, inserted, callerKeys);
    return inserted;
  });
  try {
    await enqueueVideoJob(infra, row);
  } catch (e) {
    infra.log.warn({ videoJobId: row.id, err: (e as Error).message }, 'enqueue failed; the reconciler will retry');
  }
  return { ...(await toVideoJob(row, infra.storage, infra.config.VIDEO_URL_TTL_SECONDS)), billable };
}

/** GET /v1/video/avatar/engines: the contract's avatar engines, each with whether it can run here for the caller. */
export async function listAvatarEngines(
  infra: Infra,
  developerId: string,
  headers: RequestHeaders,
): Promise<{ data: VideoEngine[] }> {
  return { data: await avatarEngines(infra, developerId, headers) };
}

export async function getVideoJobFor(infra: Infra, developerId: string, id: string): Promise<VideoJob> {
  const row = await getOwnedVideoJob(infra.db, developerId, id);
  if (!row) throw ApiError.notFound('video job', id);
  return toVideoJob(row, infra.storage, infra.config.VIDEO_URL_TTL_SECONDS);
}

/** The speech vendors a job calls, if any (avatar from text: TTS; dub: STT and TTS). */
function speechProvidersOf(type: VideoJobType, body: VideoBody): (string | undefined)[] {
  if (type === 'dub') return [(body as DubVideoBody).tts_provider, dubSttProvider(body as DubVideoBody)];
  if (type === 'avatar' && (body as AvatarVideoBody).text) return [(body as AvatarVideoBody).tts_provider];
  return [];
}

/** The provider a job will run on, refusing at submission what cannot run here. */
async function resolveProvider(
  infra: Infra,
  type: VideoJobType,
  body: VideoBody,
  developerId: string,
  headers: RequestHeaders,
): Promise<string> {
  const engines = infra.engines.video;
  const requested = body.provider;
  const selfHosted = async (kind: ModelServerKind, provider: string) => {
    requireModelServer(infra, kind, provider);
    const server = engines.servers.get(`${kind}:${provider}`);
    if (!server) return;
    const h = await checkModelServer(server);
    if (!h.ok)
      throw new ApiError('provider_unavailable', { provider, detail: `its model server is ${h.detail}` }, 'provider');
  };
  switch (type) {
    case 'generate': {
      let p = requested as string;
      if (p === 'auto') p = [...engines.servers.values()].find((s) => s.kind === 'generate')?.provider ?? 'default';
      await selfHosted('generate', p);
      engines.generate.get(p);
      return p;
    }
    case 'avatar': {
      const b = body as AvatarVideoBody;
      await selfHosted('avatar', requested);
      engines.avatar.get(requested);
      if (b.text) {
        const tts = videoTts(infra, b.tts_provider);
        // Refused now, not when the job runs: a word the local voices would spell out for minutes.
        tts.checkText(b.text, 'text');
        await resolveProviderKey(infra, { engine: tts, developerId, headers });
        if (b.target_language) checkLanguagePair('en', b.target_language, 'target_language');
      }
      return requested;
    }
    case 'lipsync':
      await selfHosted('lipsync', requested);
      engines.lipsync.get(requested);
      return requested;
    case 'dub': {
      const b = body as DubVideoBody;
      await selfHosted('lipsync', b.lipsync_provider);
      engines.lipsync.get(b.lipsync_provider);
      await resolveProviderKey(infra, { engine: videoTts(infra, b.tts_provider), developerId, headers });
      await checkDubLanguages(infra, b, developerId, headers);
      // The STT engine and its key, as on POST /v1/transcribe (no key → 400 provider_unavailable now, not later).
      const stt = sttEngineFor(infra, { provider: dubSttProvider(b), language: dubSttLanguage(b) });
      await resolveProviderKey(infra, { engine: stt, developerId, headers });
      return 'default';
    }
    case 'analyze':
      await selfHosted('analyze', requested);
      engines.analysis.get(requested);
      return requested;
  }
}

function checkLanguagePair(source: string, target: string, param: string): void {
  if (!apertium().supports(source, target)) {
    throw new ApiError(
      'unsupported_language',
      {
        detail: `${param}: no ${source}→${target} translation is available; installed Apertium pairs: ${apertium().pairs().join(', ')}`,
      },
      param,
    );
  }
}
