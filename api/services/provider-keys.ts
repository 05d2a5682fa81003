import {
  deleteProviderKey,
  getProviderKeyRow,
  listProviderKeys,
  markProviderKeyVerified,
  openProviderKey,
  providerKeyCipher,
  upsertProviderKey,
  type ProviderKeyRow,
} from '../../shared/platform/keys/stored-keys.ts';
import { ifDate } from '../../shared/contracts/absent.ts';
import type { ProviderKeyItem, VerifyResult } from '../../shared/contracts/billing.ts';
import { verifyVendorKey } from '../../shared/domains/billing/verify-key.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import type { Infra } from '../../shared/platform/infra.ts';

/** Stores (or replaces) a developer's key for a vendor, encrypted; the answer shows only its last four. */
export async function storeProviderKey(
  infra: Infra,
  developerId: string,
  provider: string,
  apiKey: string,
): Promise<ProviderKeyItem> {
  const { row, created } = await upsertProviderKey(
    infra.db,
    providerKeyCipher(infra.config),
    developerId,
    provider,
    apiKey,
  );
  infra.log.info({ developerId, provider, replaced: !created }, 'provider key stored');
  return toItem(row);
}

export async function listStoredProviderKeys(infra: Infra, developerId: string): Promise<ProviderKeyItem[]> {
  return (await listProviderKeys(infra.db, developerId)).map(toItem);
}

export async function removeProviderKey(infra: Infra, developerId: string, provider: string): Promise<void> {
  if (!(await deleteProviderKey(infra.db, developerId, provider))) throw notStored(provider);
  infra.log.info({ developerId, provider }, 'provider key deleted');
}

/**
 * Calls the vendor's cheapest authenticated endpoint with the stored key. A key the vendor refuses is a valid
 * answer (200, valid: false); a vendor that cannot be reached is 502.
 */
export async function verifyProviderKey(
  infra: Infra,
  developerId: string,
  provider: string,
  signal?: AbortSignal,
): Promise<VerifyResult> {
  const row = await getProviderKeyRow(infra.db, developerId, provider);
  if (!row) throw notStored(provider);
  const key = await openProviderKey(infra.db, providerKeyCipher(infra.config), row);
  if (key === null) {
    return {
      provider,
      valid: false,
      detail: 'The stored key cannot be decrypted (its master key was removed); store it again.',
    };
  }
  const outcome = await verifyVendorKey(infra.config, provider, key, signal);
  switch (outcome.kind) {
    case 'unsupported':
      throw new ApiError('verification_unsupported', { provider }, 'provider');
    case 'unreachable':
      throw new ApiError('upstream_error', { provider, detail: outcome.detail });
    case 'rejected':
      infra.log.info({ developerId, provider, status: outcome.status }, 'provider key rejected by vendor');
      return {
        provider,
        valid: false,
        ...ifDate('verifiedAt', row.verified_at),
        detail: `The provider rejected the key (HTTP ${outcome.status}).`,
      };
    case 'valid': {
      const at = await markProviderKeyVerified(infra.db, developerId, provider);
      return { provider, valid: true, ...ifDate('verifiedAt', at), detail: 'The provider accepted the key.' };
    }
  }
}

function notStored(provider: string): ApiError {
  return new ApiError('not_found', { resource: 'stored provider key', id: provider }, 'provider');
}

function toItem(r: ProviderKeyRow): ProviderKeyItem {
  return {
    provider: r.provider,
    lastFour: r.last_four,
    createdAt: r.created_at.toISOString(),
    ...ifDate('verifiedAt', r.verified_at),
  };
}
