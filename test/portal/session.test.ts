import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { PortalBrowser } from '../../support/helpers/portal.ts';

let p: TestPlatform;
let seq = 0;
/** A fresh valid (NANP) phone number per test. */
const phone = () => `+1415555${String(100 + seq++).padStart(4, '0')}`;

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
}, 120_000);

afterAll(async () => {
  await p?.close();
});

async function errorOf(res: Response): Promise<{ code: string; param: string | null; type: string }> {
  return ((await res.json()) as { error: { code: string; param: string | null; type: string } }).error;
}

describe('sign-up and sign-in through the development sink', () => {
  it('request code → verify → needs_name → signup → session → key via the mirror → logout', async () => {
    const b = new PortalBrowser(p);
    const ph = phone();
    const code = await b.requestCode(ph);
    expect(code).toMatch(/^\d{6}$/);

    const verify = await b.verify(ph, code);
    expect(verify.status).toBe(200);
    expect(verify.headers.get('set-cookie')).toMatch(/^vap_portal=[\w-]{43}; Path=\/portal; HttpOnly; SameSite=Lax/);
    expect(verify.headers.get('set-cookie')).not.toContain('Secure');
    const v = (await verify.json()) as { status: string; developer: unknown };
    expect(v).toMatchObject({ status: 'needs_name', developer: null });

    // A sign-up session is not a developer session: the mirror refuses it.
    expect((await b.fetch('/portal/api/v1/keys')).status).toBe(401);
    const pending = (await (await b.fetch('/portal/api/auth/session')).json()) as { status: string; phone: string };
    expect(pending).toMatchObject({ status: 'needs_name', phone: ph });

    const before = b.cookie;
    const signup = await b.fetch('/portal/api/auth/signup', { method: 'POST', json: { name: 'Ada Lovelace' } });
    expect(signup.status).toBe(201);
    const s = (await signup.json()) as {
      developer: { id: string; name: string; tier: string; phone: string };
      csrfToken: string;
    };
    expect(s.developer).toMatchObject({ name: 'Ada Lovelace', tier: 'starter', phone: ph });
    expect(b.cookie).not.toBe(before);
    b.csrf = s.csrfToken;

    const session = await b.fetch('/portal/api/auth/session');
    expect(session.status).toBe(200);
    expect(session.headers.get('cache-control')).toBe('no-store');
    const info = (await session.json()) as {
      status: string;
      developer: { id: string };
      idleExpiresAt: string;
      absoluteExpiresAt: string;
    };
    expect(info.status).toBe('signed_in');
    expect(info.developer.id).toBe(s.developer.id);
    expect(Date.parse(info.idleExpiresAt)).toBeLessThanOrEqual(Date.parse(info.absoluteExpiresAt));

    // A key made through the mirror is shown raw once, and works on /v1.
    const created = await b.fetch('/portal/api/v1/keys', { method: 'POST', json: { name: 'from portal' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-usage-limit')).not.toBeNull();
    expect(created.headers.get('x-ratelimit-limit')).toBe('120');
    const key = (await created.json()) as { id: string; key: string };
    expect(key.key).toMatch(/^vap_/);
    const me = (await (await p.request('/v1/me', { key: key.key })).json()) as { developerId: string };
    expect(me.developerId).toBe(s.developer.id);
    const list = (await (await b.fetch('/portal/api/v1/keys')).json()) as { data: Array<Record<string, unknown>> };
    expect(list.data.map((k) => k.id)).toContain(key.id);
    expect(JSON.stringify(list)).not.toContain(key.key);

    const out = await b.fetch('/portal/api/auth/logout', { method: 'POST' });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/vap_portal=; Path=\/portal;.*Max-Age=0/);
  });

  it('a known phone signs straight in; the session carries the developer', async () => {
    const ph = phone();
    const first = new PortalBrowser(p);
    const id = await first.signIn(ph, 'Grace');
    const again = new PortalBrowser(p);
    const code = await again.requestCode(ph);
    const res = await again.verify(ph, code);
    expect(((await res.json()) as { status: string; developer: { id: string } }).developer.id).toBe(id);
  });

  it('rejects an invalid phone with an inline error on "phone"', async () => {
    const b = new PortalBrowser(p);
    const res = await b.fetch('/portal/api/auth/otp', { method: 'POST', json: { phone: '+1 555 000 1111' } });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatchObject({ code: 'invalid_phone_number', param: 'phone' });
  });

  it('answers known and unknown phones identically (no enumeration)', async () => {
    const known = phone();
    await new PortalBrowser(p).signIn(known);
    const unknown = phone();
    const answers = [];
    for (const ph of [known, unknown]) {
      const res = await new PortalBrowser(p).fetch('/portal/api/auth/otp', { method: 'POST', json: { phone: ph } });
      answers.push({ status: res.status, body: await res.text(), cookie: res.headers.get('set-cookie') });
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]!.status).toBe(202);
    // A wrong code is the same answer for both as well.
    const wrong = [];
    for (const ph of [known, unknown]) {
      const res = await new PortalBrowser(p).verify(ph, '000000');
      wrong.push({ status: res.status, code: (await errorOf(res)).code });
    }
    expect(wrong[0]).toEqual(wrong[1]);
  });
});

describe('sessions', () => {
  it('issues a new session id at sign-in and ends the one the browser came with (fixation)', async () => {
    const ph = phone();
    const b = new PortalBrowser(p);
    await b.signIn(ph);
    const first = b.cookie!;
    const code = await b.requestCode(ph);
    await b.verify(ph, code);
    expect(b.cookie).not.toBe(first);
    const old = await b.fetch('/portal/api/auth/session', { headers: { cookie: `vap_portal=${first}` } });
    expect(old.status).toBe(401);
    // An id planted by an attacker (never issued) is not adopted either.
    const planted = new PortalBrowser(p);
    planted.cookie = 'attacker-chosen-session-id-0000000000000000';
    await planted.verify(ph, await planted.requestCode(ph));
    expect(planted.cookie).not.toBe('attacker-chosen-session-id-0000000000000000');
  });

  it('logout ends the session server-side: the old cookie no longer works', async () => {
    const b = new PortalBrowser(p);
    await b.signIn(phone());
    const cookie = b.cookie!;
    expect((await b.fetch('/portal/api/v1/keys')).status).toBe(200);
    expect((await b.fetch('/portal/api/auth/logout', { method: 'POST' })).status).toBe(204);
    const replay = await b.fetch('/portal/api/v1/keys', { headers: { cookie: `vap_portal=${cookie}` } });
    expect(replay.status).toBe(401);
    expect(await errorOf(replay)).toMatchObject({ code: 'portal_session_required', type: 'authentication_error' });
  });

  it('sign out everywhere ends every session of the developer', async () => {
    const ph = phone();
    const a = new PortalBrowser(p);
    await a.signIn(ph);
    const b = new PortalBrowser(p);
    await b.signIn(ph);
    const other = new PortalBrowser(p);
    await other.signIn(phone());
    expect((await a.fetch('/portal/api/auth/logout-all', { method: 'POST' })).status).toBe(204);
    expect((await a.fetch('/portal/api/auth/session')).status).toBe(401);
    expect((await b.fetch('/portal/api/auth/session')).status).toBe(401);
    expect((await other.fetch('/portal/api/auth/session')).status).toBe(200);
  });

  it('ends a session after the idle limit and after the absolute limit', async () => {
    const clock = p.app.portal.clock;
    const real = clock.now;
    try {
      const b = new PortalBrowser(p);
      await b.signIn(phone());
      const idle = p.config.PORTAL_SESSION_IDLE_MINUTES * 60_000;
      clock.now = () => Date.now() + idle - 60_000;
      expect((await b.fetch('/portal/api/auth/session')).status).toBe(200); // activity moves the idle deadline
      clock.now = () => Date.now() + 2 * idle - 120_000;
      expect((await b.fetch('/portal/api/auth/session')).status).toBe(200);
      clock.now = () => Date.now() + 3 * idle;
      expect((await b.fetch('/portal/api/auth/session')).status).toBe(401);

      clock.now = real;
      const c = new PortalBrowser(p);
      await c.signIn(phone());
      const absolute = p.config.PORTAL_SESSION_ABSOLUTE_HOURS * 3_600_000;
      for (let t = idle / 2; t < absolute; t += idle / 2) {
        clock.now = () => Date.now() + t;
        expect((await c.fetch('/portal/api/auth/session')).status).toBe(200);
      }
      clock.now = () => Date.now() + absolute;
      expect((await c.fetch('/portal/api/auth/session')).status).toBe(401);
    } finally {
      clock.now = real;
    }
  });
});

describe('CSRF and credentials', () => {
  it('refuses writes without the token, with a wrong token, and from another origin', async () => {
    const b = new PortalBrowser(p);
    await b.signIn(phone());
    const post = (init: RequestInit & { csrf?: boolean }) =>
      b.fetch('/portal/api/v1/keys', { method: 'POST', json: { name: 'x' }, ...init });
    for (const res of [
      await post({ csrf: false }),
      await post({ headers: { 'x-csrf-token': 'wrong' } }),
      await post({ headers: { origin: 'https://evil.example' } }),
      await post({ headers: { origin: '' } }),
    ]) {
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe('csrf_failed');
    }
    // Same-origin fetch without Origin but with Sec-Fetch-Site: same-origin is a browser's same-site request.
    const ok = await b.fetch('/portal/api/v1/keys', {
      method: 'POST',
      json: { name: 'fine' },
      headers: { 'sec-fetch-site': 'same-origin', origin: '' },
    });
    expect(ok.status).toBe(201);
    // Reads need no token.
    expect((await b.fetch('/portal/api/v1/keys', { csrf: false })).status).toBe(200);
    // Sign-in from another site is refused too (login CSRF).
    const login = await b.fetch('/portal/api/auth/otp', {
      method: 'POST',
      json: { phone: phone() },
      headers: { origin: 'https://evil.example' },
    });
    expect(login.status).toBe(403);
  });

  it('answers an API key on /portal/* with portal_session_required', async () => {
    const { apiKey } = await p.developer();
    for (const path of ['/portal/api/v1/keys', '/portal/api/v1/me', '/portal/api/auth/session', '/portal/api/nope']) {
      const res = await p.request(path, { key: apiKey });
      expect(res.status, path).toBe(401);
      expect((await errorOf(res)).code).toBe('portal_session_required');
    }
  });

  it('a portal cookie authenticates nothing on /v1/*', async () => {
    const b = new PortalBrowser(p);
    await b.signIn(phone());
    const res = await fetch(`${p.url}/v1/keys`, { headers: { cookie: `vap_portal=${b.cookie}` } });
    expect(res.status).toBe(401);
    expect((await errorOf(res)).code).toBe('missing_api_key');
  });

  it('keeps the mirror out of /openapi.json', async () => {
    const doc = (await (await fetch(`${p.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((k) => k.startsWith('/portal'))).toEqual([]);
    expect(Object.keys(doc.paths)).toContain('/v1/keys');
  });

  it('sets Secure on the cookie when the request came over HTTPS', async () => {
    const ph = phone();
    const b = new PortalBrowser(p);
    const code = await b.requestCode(ph);
    const res = await b.fetch('/portal/api/auth/verify', {
      method: 'POST',
      json: { phone: ph, code },
      headers: { 'x-forwarded-proto': 'https', origin: p.url.replace('http:', 'https:') },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toContain('; Secure');
  });
});

describe('operator CLI', () => {
  function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = { ...process.env, DATABASE_URL: p.config.DATABASE_URL, REDIS_PREFIX: p.config.REDIS_PREFIX };
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'scripts/cli.ts', ...args],
        { env, timeout: 60_000 },
        (err, o, e) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout: o, stderr: e }),
      );
    });
  }

  it('attaches a phone to an existing developer, who then signs in with it; reads the dev sink', async () => {
    const { developerId } = await p.developer('pro');
    const ph = phone();
    const typed = `${ph.slice(0, 2)} (${ph.slice(2, 5)}) ${ph.slice(5, 8)}-${ph.slice(8)}`;
    const attach = await cli(['portal', 'attach-phone', '--developer', developerId, '--phone', typed]);
    expect(attach.code, attach.stderr).toBe(0);
    expect(JSON.parse(attach.stdout)).toEqual({ developerId, phone: ph });

    const b = new PortalBrowser(p);
    await b.fetch('/portal/api/auth/otp', { method: 'POST', json: { phone: ph } });
    const read = await cli(['portal', 'code', '--phone', ph]);
    expect(read.code, read.stderr).toBe(0);
    const { code } = JSON.parse(read.stdout) as { code: string };
    const res = await b.verify(ph, code);
    expect(await res.json()).toMatchObject({ status: 'signed_in', developer: { id: developerId, tier: 'pro' } });

    const taken = await cli([
      'portal',
      'attach-phone',
      '--developer',
      (await p.developer()).developerId,
      '--phone',
      ph,
    ]);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain('already belongs to another developer');
  });
});
