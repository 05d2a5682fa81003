import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
});
afterAll(() => p?.close());

describe('agents in the OpenAPI document', () => {
  it('documents every agents route with its request schema', async () => {
    const res = await p.request('/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
    for (const [path, method] of [
      ['/v1/agents', 'post'],
      ['/v1/agents', 'get'],
      ['/v1/agents/provision', 'post'],
      ['/v1/agents/{id}', 'put'],
      ['/v1/agents/{id}/chat', 'post'],
      ['/v1/agents/{id}/speak', 'post'],
      ['/v1/agents/{id}/sync', 'post'],
      ['/v1/agents/{id}/instances', 'post'],
    ]) {
      expect(doc.paths[path!]?.[method!], `${method} ${path}`).toBeDefined();
    }
    const create = JSON.stringify(doc.paths['/v1/agents']!.post!.requestBody);
    expect(create).toContain('llmProvider');
    expect(create).toContain('anthropic');
  });
});
