import type { TestPlatform } from '../../support/helpers/platform.ts';

export interface ErrorBody {
  error: { type: string; code: string; message: string; param: string | null; requestId: string };
}
export interface SearchItem {
  content: string;
  score: number;
  metadata?: Record<string, unknown>;
  documentId: string;
  chunkIndex: number;
}

/** JSON call that returns status and parsed body. */
export async function call<T = unknown>(
  p: TestPlatform,
  key: string,
  method: string,
  path: string,
  json?: unknown,
): Promise<{ status: number; body: T; headers: Headers }> {
  const res = await p.request(path, { method, key, json });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T, headers: res.headers };
}

export async function createCollection(p: TestPlatform, key: string, name = 'kb'): Promise<string> {
  const r = await call<{ id: string }>(p, key, 'POST', '/v1/collections', { name });
  if (r.status !== 201) throw new Error(`create collection: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

export async function ingest(
  p: TestPlatform,
  key: string,
  collectionId: string,
  body: Record<string, unknown>,
): Promise<{ documentId: string; chunksCreated: number; tokensUsed: number }> {
  const r = await call<{ documentId: string; chunksCreated: number; tokensUsed: number }>(
    p,
    key,
    'POST',
    `/v1/collections/${collectionId}/ingest`,
    body,
  );
  if (r.status !== 201) throw new Error(`ingest: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function search(
  p: TestPlatform,
  key: string,
  collectionId: string,
  body: Record<string, unknown>,
): Promise<SearchItem[]> {
  const r = await call<{ results: SearchItem[] }>(p, key, 'POST', `/v1/collections/${collectionId}/search`, body);
  if (r.status !== 200) throw new Error(`search: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.results;
}
