import { z } from 'zod';
import { ApiError } from './errors/api-error.ts';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** Query string of every list route. Newest first; the cursor is opaque to clients. */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  cursor: z.string().max(200).optional(),
});
export type PageQuery = z.infer<typeof PageQuery>;

/**
 * `nextCursor` is a string when there is a next page and absent on the last one, never null: the contract types
 * it as a string, and a generated client would reject null (see the OpenAPI document's description).
 */
export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), nextCursor: z.string().optional(), hasMore: z.boolean() });
}
export interface Page<T> {
  data: T[];
  nextCursor?: string;
  hasMore: boolean;
}

/** `{nextCursor}` when there is a next page, `{}` on the last one. */
export function cursorField(hasMore: boolean, cursor: () => string | undefined): { nextCursor?: string } {
  const c = hasMore ? cursor() : undefined;
  return c ? { nextCursor: c } : {};
}

/** Cursor = the last row's sort key (time-sortable id), base64url-encoded so clients treat it as opaque. */
export function encodeCursor(lastId: string): string {
  return Buffer.from(`v1:${lastId}`).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string | null {
  if (!cursor) return null;
  const raw = Buffer.from(cursor, 'base64url').toString('utf8');
  // Any non-empty key after the prefix: a list may sort by a short key (agents by their sequence number, so the
  // first nine agents of a deployment have one-digit cursors). Each list checks the key's own form.
  if (!raw.startsWith('v1:') || raw.length === 3) throw new ApiError('invalid_cursor', {}, 'cursor');
  return raw.slice(3);
}

/**
 * Builds a page from rows fetched with `limit + 1` ordered by id descending. Ids are time-sortable, so a row
 * inserted between two page requests never shifts the rows of the next page.
 */
export function toPage<R extends { id: string }, T>(rows: R[], limit: number, map: (r: R) => T): Page<T> {
  const hasMore = rows.length > limit;
  const kept = hasMore ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { data: kept.map(map), ...cursorField(hasMore, () => last && encodeCursor(last.id)), hasMore };
}
