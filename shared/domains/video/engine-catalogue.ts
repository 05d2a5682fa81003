import { AVATAR_GPU_PROVIDERS, AVATAR_PROVIDERS, type VideoEngine } from '../../contracts/video.ts';
import { ApiError, isApiError } from '../../kernel/errors/api-error.ts';
import type { ModelServerKind } from '../../engines/core/model-server.ts';
import type { Infra } from '../../platform/infra.ts';
import { resolveProviderKey } from '../../platform/keys/provider-key.ts';
import { VIDEO_VENDORS } from './vendor-keys.ts';
import type { RequestHeaders } from './job-keys.ts';

/** What makes a self-hosted engine available: a GPU node serving it behind the model-server contract. */
export function modelServerHint(kind: ModelServerKind, provider: string): string {
  return (
    `${provider} runs on a GPU node behind the model-server contract (docs/video.md): set ` +
    `VIDEO_MODEL_SERVERS=${kind}:${provider}=http://<gpu-node>:<port> (comma-separated with the others)`
  );
}

/** What makes a commercial engine available to a developer. */
function vendorHint(provider: string): string {
  const v = VIDEO_VENDORS[provider];
  return v?.callerKeyOnly
    ? `${provider} runs on the caller's own ${provider} key: store it with POST /v1/provider-keys {"provider": "${provider}", "apiKey": "…"}`
    : `${provider} needs a ${provider} key: the X-Provider-Key header, a stored key (POST /v1/provider-keys) or the platform key`;
}

/**
 * The contract's avatar engines and whether each can run here for this caller: `default` always (local, CPU);
 * the five GPU engines when VIDEO_MODEL_SERVERS names a model server for them (configuration only: a listed
 * server that is down is refused at submission, after its health check); the commercial one when a key resolves
 * for the caller (header, stored key; HeyGen takes no platform key). Unavailable ones say what to configure.
 */
export async function avatarEngines(
  infra: Infra,
  developerId: string,
  headers: RequestHeaders,
): Promise<VideoEngine[]> {
  const engines = infra.engines.video;
  const out: VideoEngine[] = [];
  for (const id of AVATAR_PROVIDERS) {
    if (id === 'default') {
      out.push({ id, kind: 'local', label: 'classical landmark warp (CPU)', available: true, billing: 'credits' });
    } else if ((AVATAR_GPU_PROVIDERS as readonly string[]).includes(id)) {
      const available = engines.servers.has(`avatar:${id}`);
      out.push({
        id,
        kind: 'self-hosted',
        label: `${id} (GPU model server)`,
        available,
        billing: 'credits',
        ...(available ? {} : { configure: modelServerHint('avatar', id) }),
      });
    } else {
      const available = await hasVendorKey(infra, id, developerId, headers);
      out.push({
        id,
        kind: 'commercial',
        label: `${id} (vendor API)`,
        available,
        billing: 'caller-key',
        ...(available ? {} : { configure: vendorHint(id) }),
      });
    }
  }
  return out;
}

async function hasVendorKey(infra: Infra, provider: string, developerId: string, headers: RequestHeaders) {
  try {
    const v = VIDEO_VENDORS[provider];
    return v ? (await resolveProviderKey(infra, { ...v, developerId, headers })) !== null : false;
  } catch (e) {
    if (isApiError(e) && e.code === 'provider_unavailable') return false;
    throw e;
  }
}

/**
 * Refuses at submission a self-hosted engine with no model server configured, saying what to configure (the
 * registry only knows what is registered, so its message cannot name the variable).
 */
export function requireModelServer(infra: Infra, kind: ModelServerKind, provider: string): void {
  if (provider === 'default' || VIDEO_VENDORS[provider] || infra.engines.video.servers.has(`${kind}:${provider}`)) {
    return;
  }
  throw new ApiError(
    'provider_unavailable',
    { provider, detail: `not configured here; ${modelServerHint(kind, provider)}` },
    'provider',
  );
}
