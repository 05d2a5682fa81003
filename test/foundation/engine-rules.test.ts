import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * "One way each" for engines, as lint rules (eslint.config.js): an engine fails only with EngineError, and every
 * vendor call (from an engine, a domain, a route or a worker) goes through core/vendor-client.ts; only the files
 * that call our own platform's API are allowed a raw fetch, by path. Run through ESLint with the repository's
 * config, so a rule that stopped applying where it should fails here.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RULES = new Set(['no-restricted-globals', 'no-restricted-properties', 'no-restricted-syntax']);
const eslint = new ESLint({ cwd: ROOT, ruleFilter: ({ ruleId }) => RULES.has(ruleId) });

async function findings(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${filePath}` });
  return result!.messages.filter((m) => m.ruleId && RULES.has(m.ruleId)).map((m) => m.message);
}

describe('engine rules', () => {
  it.each([
    ['shared/engines/tts/vendors/x.ts', `export const f = (u: string) => fetch(u);`],
    ['shared/domains/portal/x.ts', `export const f = (u: string) => fetch(u);`],
    ['shared/domains/agent-tests/x.ts', `export const f = (u: string) => fetch(u);`],
    ['shared/platform/x.ts', `export const f = (u: string) => fetch(u);`],
    ['api/routes/x.ts', `export const f = (u: string) => fetch(u);`],
    ['workers/cpu/x.ts', `export const f = (u: string) => fetch(u);`],
    ['shared/domains/x.ts', `export const f = (u: string) => globalThis.fetch(u);`],
    [
      'shared/engines/stt/x.ts',
      `import { ApiError } from '../../kernel/errors/api-error.ts';\nthrow ApiError.validation('bad');`,
    ],
    [
      'shared/engines/core/x.ts',
      `import { ApiError } from '../../kernel/errors/api-error.ts';\nthrow new ApiError('not_found');`,
    ],
    [
      'shared/engines/avatar/x.ts',
      `import { VideoFailure } from '../../kernel/media/failure.ts';\nthrow new VideoFailure('input_unreadable', 'x');`,
    ],
  ])('reports %s', async (file, code) => {
    expect(await findings(file, code)).toHaveLength(1);
  });

  it.each([
    ['shared/engines/core/vendor-client.ts', `export const f = (u: string) => fetch(u);`],
    // The agent-test runner calls the platform it tests, not a vendor (eslint.config.js, PLATFORM_API_CALLERS).
    ['shared/domains/agent-tests/session-api.ts', `export const f = (u: string) => fetch(u);`],
    // The kernel's fetches are not vendor calls: user URLs (safe-fetch), the embedded S3 probe.
    ['shared/kernel/net/x.ts', `export const f = (u: string) => fetch(u);`],
    [
      'shared/domains/video/x.ts',
      `import { VideoFailure } from '../../kernel/media/failure.ts';\nthrow new VideoFailure('input_unreadable', 'x');`,
    ],
    [
      'shared/engines/tts/x.ts',
      `import { EngineError } from '../../kernel/errors/engine-error.ts';\nthrow EngineError.invalidInput('default', 'invalid', 'x');`,
    ],
  ])('allows %s', async (file, code) => {
    expect(await findings(file, code)).toEqual([]);
  });
});
