import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/kernel/config/index.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import { assertSessionSecret, sessionSecret } from '../../shared/domains/realtime/secret.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { signSessionToken, verifySessionToken } from '../../shared/domains/realtime/token.ts';

const secret = 'x'.repeat(40);
const claims = { sid: 'ses_1', dev: 'dev_1', agt: 'agt_1', ch: 'twilio' as const, exp: 2_000_000_000 };
const key = new TextEncoder().encode(secret);

describe('session tokens', () => {
  it('round-trips as a standard HS256 JWT and rejects tampering, other channels and expiry', async () => {
    const tok = await signSessionToken(secret, claims);
    const [header] = tok.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toMatchObject({ alg: 'HS256', typ: 'JWT' });
    expect(await verifySessionToken(secret, tok, 'twilio', 1_000)).toMatchObject(claims);
    expect(await verifySessionToken('y'.repeat(40), tok, 'twilio', 1_000)).toBeNull();
    expect(await verifySessionToken(secret, tok, 'direct', 1_000)).toBeNull();
    const [h, body, mac] = tok.split('.');
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...payload, dev: 'dev_2' })).toString('base64url');
    expect(await verifySessionToken(secret, `${h}.${forged}.${mac}`, 'twilio', 1_000)).toBeNull();
    expect(await verifySessionToken(secret, `${h}.${body}`, 'twilio', 1_000)).toBeNull();
    expect(await verifySessionToken(secret, 42, 'twilio', 1_000)).toBeNull();
    expect(await verifySessionToken(secret, 'not.a.token', 'twilio', 1_000)).toBeNull();
  });

  it('rejects a token at and after its expiry, and accepts it just before', async () => {
    const tok = await signSessionToken(secret, claims);
    expect(await verifySessionToken(secret, tok, 'twilio', claims.exp * 1000 - 1_000)).not.toBeNull();
    expect(await verifySessionToken(secret, tok, 'twilio', claims.exp * 1000)).toBeNull();
    expect(await verifySessionToken(secret, tok, 'twilio', claims.exp * 1000 + 60_000)).toBeNull();
  });

  it('rejects a correctly signed token for another audience or issuer, or with no expiry', async () => {
    const sign = (aud: string, iss: string, exp?: number) => {
      const jwt = new SignJWT({ sid: 'ses_1', dev: 'dev_1', agt: 'agt_1', ch: 'twilio' })
        .setProtectedHeader({ alg: 'HS256' })
        .setAudience(aud)
        .setIssuer(iss);
      return (exp === undefined ? jwt : jwt.setExpirationTime(exp)).sign(key);
    };
    expect(
      await verifySessionToken(secret, await sign('realtime:twilio', 'vap', claims.exp), 'twilio', 1_000),
    ).toBeTruthy();
    expect(await verifySessionToken(secret, await sign('api', 'vap', claims.exp), 'twilio', 1_000)).toBeNull();
    expect(
      await verifySessionToken(secret, await sign('realtime:twilio', 'other', claims.exp), 'twilio', 1_000),
    ).toBeNull();
    expect(await verifySessionToken(secret, await sign('realtime:twilio', 'vap'), 'twilio', 1_000)).toBeNull();
  });

  it('refuses an unsigned ("alg: none") token', async () => {
    const tok = await signSessionToken(secret, claims);
    const [, body] = tok.split('.');
    const none = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
    expect(await verifySessionToken(secret, `${none}.${body}.`, 'twilio', 1_000)).toBeNull();
  });
});

describe('REALTIME_SESSION_SECRET at boot', () => {
  const dev = loadConfig({ NODE_ENV: 'development' });
  const prod = loadConfig({ NODE_ENV: 'production' });
  const withSecret = loadConfig({ NODE_ENV: 'production', REALTIME_SESSION_SECRET: secret });

  it('is required when api and realtime run apart, and in production', () => {
    for (const [config, roles] of [
      [dev, ['api']],
      [dev, ['realtime']],
      [dev, ['api', 'cpu']],
      [prod, ['api', 'cpu', 'gpu', 'realtime']],
      [loadConfig({ PROCESSES: '2' }), ['api', 'cpu', 'gpu', 'realtime']],
    ] as const) {
      expect(() => assertSessionSecret(config, roles), roles.join(',')).toThrow(/^REALTIME_SESSION_SECRET is required/);
    }
  });

  it('may be left unset in the one-process mode, by roles that neither mint nor check tokens, or when set', () => {
    expect(() => assertSessionSecret(dev, ['api', 'cpu', 'gpu', 'realtime'])).not.toThrow();
    expect(() => assertSessionSecret(prod, ['cpu', 'gpu'])).not.toThrow();
    expect(() => assertSessionSecret(withSecret, ['api'])).not.toThrow();
  });
});

describe('the invented secret of the one-process mode', () => {
  it('is made once per process, logged once, and never replaces a configured one', () => {
    const lines: string[] = [];
    const log = createLogger(
      'warn',
      {},
      new Writable({ write: (chunk: Buffer, _enc, cb) => (lines.push(chunk.toString('utf8')), cb()) }),
    );
    // Only the two fields sessionSecret reads; the rest of Infra (connections) plays no part here.
    const infra = { config: loadConfig({ NODE_ENV: 'development' }), log } as Pick<Infra, 'config' | 'log'> as Infra;
    const invented = sessionSecret(infra);
    expect(invented.length).toBeGreaterThanOrEqual(32);
    expect(sessionSecret(infra)).toBe(invented);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 40,
      msg: expect.stringMatching(/^REALTIME_SESSION_SECRET is unset/),
    });
    const configured = { config: loadConfig({ REALTIME_SESSION_SECRET: secret }), log } as Pick<
      Infra,
      'config' | 'log'
    >;
    expect(sessionSecret(configured as Infra)).toBe(secret);
    expect(lines).toHaveLength(1);
  });
});

describe('npm run start:api without REALTIME_SESSION_SECRET', () => {
  it('refuses to boot with the one-line config error naming the variable (exit 78)', () => {
    const env: Record<string, string | undefined> = { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'silent' };
    delete env.REALTIME_SESSION_SECRET;
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/start.ts', 'api'], {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(78);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^REALTIME_SESSION_SECRET is required when api and realtime run in separate processes/);
  });
});
