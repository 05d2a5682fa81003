import { readDevOtp } from '../../shared/domains/portal/otp-sender.ts';
import type { TestPlatform } from './platform.ts';
import { waitUntil } from './platform.ts';

/** The code the development sink delivered to `phone` (what `npm run cli -- portal code --phone …` prints). */
export function devOtp(p: TestPlatform, phone: string): Promise<string | null> {
  return readDevOtp(p.infra.redis, p.config.REDIS_PREFIX, phone);
}

/**
 * A browser-like portal client: keeps the session cookie, sends the platform's own Origin and the CSRF token on
 * writes, and signs in through the real flow (code request → development sink → verify → sign-up).
 */
export class PortalBrowser {
  cookie: string | null = null;
  csrf: string | null = null;
  ip = `10.${rand()}.${rand()}.${rand()}`;

  constructor(readonly p: TestPlatform) {}

  get origin(): string {
    return this.p.url;
  }

  async fetch(path: string, init: RequestInit & { json?: unknown; csrf?: boolean } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookie && !headers.has('cookie')) headers.set('cookie', `vap_portal=${this.cookie}`);
    if (!headers.has('origin')) headers.set('origin', this.origin);
    if (!headers.has('x-forwarded-for')) headers.set('x-forwarded-for', this.ip);
    if (init.csrf !== false && this.csrf && !headers.has('x-csrf-token')) headers.set('x-csrf-token', this.csrf);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(init.json);
    }
    const res = await fetch(this.p.url + path, { ...init, headers, body });
    const set = res.headers.get('set-cookie');
    const m = set && /vap_portal=([^;]*)/.exec(set);
    if (m) this.cookie = m[1] || null;
    return res;
  }

  /** Asks for a code and reads it from the development sink. */
  async requestCode(phone: string): Promise<string> {
    const before = await devOtp(this.p, phone);
    const res = await this.fetch('/portal/api/auth/otp', { method: 'POST', json: { phone } });
    if (res.status !== 202) throw new Error(`otp: ${res.status} ${await res.text()}`);
    return waitUntil(async () => {
      const code = await devOtp(this.p, phone);
      return code && code !== before ? code : null;
    });
  }

  async verify(phone: string, code: string): Promise<Response> {
    const res = await this.fetch('/portal/api/auth/verify', { method: 'POST', json: { phone, code } });
    if (res.ok) this.csrf = ((await res.clone().json()) as { csrfToken: string }).csrfToken;
    return res;
  }

  /** Full sign-in; names the account when the phone is new. Returns the developer id. */
  async signIn(phone: string, name = 'Ada'): Promise<string> {
    const code = await this.requestCode(phone);
    const res = await this.verify(phone, code);
    const body = (await res.json()) as { status: string; developer: { id: string } | null };
    if (body.status === 'signed_in') return body.developer!.id;
    const signup = await this.fetch('/portal/api/auth/signup', { method: 'POST', json: { name } });
    if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${await signup.text()}`);
    const s = (await signup.json()) as { developer: { id: string }; csrfToken: string };
    this.csrf = s.csrfToken;
    return s.developer.id;
  }
}

function rand(): number {
  return Math.floor(Math.random() * 250) + 1;
}
