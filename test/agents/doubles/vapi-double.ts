import { startDouble, type Double } from '../../../shared/domains/agent-tests/simulators/http-double.ts';

/**
 * Vapi's assistant API as far as sync uses it: `POST /assistant` creates (201 with the assistant and its `id`),
 * `PATCH /assistant/:id` updates (200, or 404 for an unknown id), Bearer auth (401 without the expected key).
 */
export async function startVapiDouble(
  expectedKey: string,
): Promise<Double & { assistants: Map<string, Record<string, unknown>> }> {
  const assistants = new Map<string, Record<string, unknown>>();
  let n = 0;
  const d = await startDouble((rec, res) => {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (rec.headers.authorization !== `Bearer ${expectedKey}`)
      return json(401, { message: 'Invalid Key', statusCode: 401 });
    const body = (rec.json ?? {}) as Record<string, unknown>;
    if (rec.method === 'POST' && rec.path === '/assistant') {
      const id = `asst-${++n}-0000-4000-8000-000000000000`;
      const a = {
        id,
        orgId: 'org-1',
        createdAt: new Date().toISOString(),
        updatedAt: new Date().toISOString(),
        ...body,
      };
      assistants.set(id, a);
      return json(201, a);
    }
    const m = /^\/assistant\/([^/]+)$/.exec(rec.path);
    if (rec.method === 'PATCH' && m) {
      const cur = assistants.get(decodeURIComponent(m[1]!));
      if (!cur) return json(404, { message: 'Not Found', statusCode: 404 });
      const next = { ...cur, ...body, updatedAt: new Date().toISOString() };
      assistants.set(cur.id as string, next);
      return json(200, next);
    }
    json(404, { message: 'Not Found', statusCode: 404 });
  });
  return Object.assign(d, { assistants });
}
