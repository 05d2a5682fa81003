import Fastify, { type FastifyPluginAsync } from 'fastify';
import { describe, expect, it } from 'vitest';
import { idempotencyPlugin } from '../../api/plugins/idempotency.ts';
import { openapiPlugin } from '../../api/plugins/openapi.ts';
import { usageHeadersPlugin } from '../../api/plugins/usage-headers.ts';
import { portalPlugin } from '../../api/portal/plugin.ts';
import { authPlugin } from '../../shared/composition/http/auth.ts';
import { errorHandlerPlugin } from '../../shared/composition/http/errors.ts';
import { inputGuardPlugin } from '../../shared/composition/http/input-guard.ts';
import { requestContextPlugin } from '../../shared/composition/http/request-context.ts';

/**
 * Every Fastify plugin of the platform has a name and declares the plugins it needs (fastify-plugin `name` and
 * `dependencies`), so registering one before what it relies on fails at boot with both names instead of a request
 * finding `req.auth` undefined.
 */
const meta = (p: FastifyPluginAsync) =>
  (p as unknown as Record<symbol, { name?: string; dependencies?: string[] }>)[Symbol.for('plugin-meta')];

describe('fastify plugins', () => {
  it.each([
    [errorHandlerPlugin, 'error-handler', []],
    [inputGuardPlugin, 'input-guard', ['error-handler']],
    [requestContextPlugin, 'request-context', []],
    [authPlugin, 'auth', ['error-handler']],
    [openapiPlugin, 'openapi', []],
    [idempotencyPlugin, 'idempotency', ['auth']],
    [usageHeadersPlugin, 'usage-headers', ['auth', 'request-context']],
    [portalPlugin, 'portal', ['auth']],
  ] as const)('is named and declares its dependencies (%#)', (plugin, name, dependencies) => {
    expect(meta(plugin as FastifyPluginAsync)).toMatchObject({ name });
    expect(meta(plugin as FastifyPluginAsync)?.dependencies ?? []).toEqual(dependencies);
  });

  it('refuses a plugin registered before the one it depends on', async () => {
    const app = Fastify({ logger: false });
    app.decorate('infra', {} as never);
    await expect(app.register(idempotencyPlugin).ready()).rejects.toThrow(/auth/);
    await app.close();
  });
});
