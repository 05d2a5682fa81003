import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../shared/kernel/ids.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { PortalBrowser } from '../../support/helpers/portal.ts';

let p: TestPlatform;
let owner: PortalBrowser;
let other: PortalBrowser;
let ownerId: string;

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  owner = new PortalBrowser(p);
  other = new PortalBrowser(p);
  ownerId = await owner.signIn('+13125550150', 'Owner');
  await other.signIn('+13125550151', 'Other');
}, 120_000);

afterAll(async () => {
  await p?.close();
});

async function job(status: string, key: string | null): Promise<string> {
  const id = newId('job');
  await p.infra.db.query(
    `insert into video_jobs (id, owner_id, type, status, provider, progress, request, request_id, result)
     values ($1, $2, 'generate', $3, 'default', 1, '{}', $4, $5)`,
    [id, ownerId, status, newId('job'), key ? { video_key: key, duration_seconds: 1 } : null],
  );
  return id;
}

describe('GET /portal/api/video/jobs/:jobId/output', () => {
  it("streams a finished job's output same-origin, to its owner only", async () => {
    const key = `video/${ownerId}/${newId('job')}.mp4`;
    const bytes = Buffer.from('not really an mp4, but bytes the player would get');
    await p.infra.storage.put(key, bytes, 'video/mp4');
    const id = await job('completed', key);
    const res = await owner.fetch(`/portal/api/video/jobs/${id}/output`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
    const stranger = await other.fetch(`/portal/api/video/jobs/${id}/output`);
    expect(stranger.status).toBe(404);
    expect(((await stranger.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('answers 404 in the envelope for a job that has not finished', async () => {
    const id = await job('processing', null);
    const res = await owner.fetch(`/portal/api/video/jobs/${id}/output`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});
