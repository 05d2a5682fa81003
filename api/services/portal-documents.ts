import type { z } from 'zod';
import type { CollectionDocument } from '../../shared/contracts/portal.ts';
import type { Page } from '../../shared/kernel/pagination.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { listDocuments } from '../../shared/domains/rag/collections.ts';

/** The collection page's document list: what each document is, where it came from, how it was chunked. */
export async function collectionDocuments(
  infra: Infra,
  developerId: string,
  collectionId: string,
  limit: number,
  cursor?: string,
): Promise<Page<z.infer<typeof CollectionDocument>>> {
  const page = await listDocuments(infra.db, developerId, collectionId, limit, cursor);
  return {
    ...page,
    data: page.data.map((d) => {
      const label = typeof d.metadata.source === 'string' ? d.metadata.source : (d.source_url ?? undefined);
      return {
        id: d.id,
        contentType: d.content_type,
        ...(label ? { source: label } : {}),
        chars: d.char_count,
        chunks: d.chunk_count,
        split: d.split,
        createdAt: d.created_at.toISOString(),
      };
    }),
  };
}
