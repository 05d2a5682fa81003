import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The role boundary as a lint rule (eslint/role-boundaries.js): roles meet only through shared/. These run ESLint
 * itself with the repository's config, so a rule that stopped firing (or a config that stopped applying it) fails.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RULE = 'local/role-boundaries';
const eslint = new ESLint({ cwd: ROOT, ruleFilter: ({ ruleId }) => ruleId === RULE });

async function crossings(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${filePath}` });
  return result!.messages.filter((m) => m.ruleId === RULE).map((m) => m.message);
}

describe('role boundaries', () => {
  it.each([
    ['api/services/x.ts', `import { registerRealtimeRoutes } from '../../workers/realtime/routes.ts';`],
    ['api/x.ts', `export { startCpuWorkers } from '../workers/cpu/role.ts';`],
    ['workers/cpu/handlers/x.ts', `import { createTwilioSession } from '../../../api/services/sessions.ts';`],
    ['workers/realtime/call/x.ts', `import { startCpuWorkers } from '../../cpu/role.ts';`],
    ['workers/gpu/x.ts', `export * from '../realtime/routes.ts';`],
    ['shared/domains/speech/x.ts', `import { transcribeSync } from '../../../api/services/transcription.ts';`],
    ['shared/x.ts', `export const load = () => import('../workers/gpu/role.ts');`],
    ['scripts/x.ts', `import { registerApiRole } from '../api/server.ts';`],
    ['benchmarks/b/x.ts', `import { startGpuWorkers } from '../../workers/gpu/role.ts';`],
    ['benchmarks/b/x.ts', `import { startDeepgramLiveDouble } from '../../test/realtime/x.ts';`],
    ['support/doubles/x.ts', `import { voicePlatformEnv } from '../../test/realtime/env.ts';`],
  ])('reports a crossing import in %s', async (file, code) => {
    expect(await crossings(file, code)).toHaveLength(1);
  });

  it.each([
    ['api/services/x.ts', `import { resolveProviderKey } from '../../shared/platform/keys/provider-key.ts';`],
    ['workers/realtime/call/x.ts', `import { TraceStore } from './trace-store.ts';`],
    ['workers/realtime/twilio/x.ts', `import { openSession } from '../call/bootstrap.ts';`],
    ['scripts/x.ts', `export const load = () => import('../workers/cpu/role.ts');`],
    ['test/x.test.ts', `import { keepSessions } from '../workers/realtime/call/keeper.ts';`],
    ['benchmarks/b/x.ts', `import { startTestPlatform } from '../../support/helpers/platform.ts';`],
    ['test/realtime/x.test.ts', `import { startCartesiaDouble } from '../../support/doubles/cartesia.ts';`],
  ])('allows %s to import within its role or through shared/', async (file, code) => {
    expect(await crossings(file, code)).toEqual([]);
  });

  it('names the rule in its message', async () => {
    const [msg] = await crossings('api/x.ts', `import '../workers/realtime/server.ts';`);
    expect(msg).toMatch(
      /^api\/ must not import workers\/realtime\/: roles meet only through shared\/ \(imports workers\/realtime\/server\.ts\)$/,
    );
  });

  it('finds no crossing in the tree', async () => {
    const results = await eslint.lintFiles(['api', 'workers', 'shared', 'scripts', 'benchmarks', 'support']);
    const found = results.flatMap((r) =>
      r.messages.filter((m) => m.ruleId === RULE).map((m) => `${r.filePath.slice(ROOT.length)}:${m.line} ${m.message}`),
    );
    expect(found).toEqual([]);
    expect(results.length).toBeGreaterThan(200);
  }, 300_000);
});
