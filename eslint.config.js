import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import boundaries from './eslint/role-boundaries.js';
import layers from './eslint/shared-layers.js';

/**
 * The files allowed a raw `fetch` to our own platform's API, not a vendor's: the agent-test runner calls the
 * platform it tests as a developer would (its own base URL and API key, statuses such as 429 and 503 read as
 * answers, not failures), which the vendor client's EngineError mapping and retries would get in the way of.
 * Listed by path so a new caller is a reviewed decision, not a silent one.
 */
const PLATFORM_API_CALLERS = ['shared/domains/agent-tests/session-api.ts'];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.data/**',
      'coverage/**',
      'workers/realtime/public/**',
      'portal/dist/**',
      '.artifacts/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    // Roles meet only through shared/: see eslint/role-boundaries.js and docs/CONTRIBUTING.md.
    files: ['api/**', 'workers/**', 'shared/**', 'scripts/**', 'benchmarks/**', 'support/**'],
    plugins: { local: boundaries },
    rules: { 'local/role-boundaries': 'error' },
  },
  {
    // shared/ in layers, each importing only the ones below (and domains in their order); no forwarding file
    // anywhere in the code: see eslint/shared-layers.js and docs/CONTRIBUTING.md.
    files: ['api/**', 'workers/**', 'shared/**', 'scripts/**', 'benchmarks/**', 'support/**'],
    plugins: { layers },
    rules: { 'layers/shared-layers': 'error' },
  },
  {
    // One way to reach a vendor (docs/CONTRIBUTING.md): through shared/engines/core/vendor-client.ts (deadline, safe
    // retries, EngineError), from an engine adapter, a domain (Twilio: engines/telephony/twilio-rest.ts), a route
    // or a worker alike. shared/kernel is outside: its fetches are not vendor calls (kernel/net/safe-fetch.ts for
    // user URLs, the embedded S3 server's readiness probe).
    files: ['shared/**', 'api/**', 'workers/**'],
    ignores: ['shared/kernel/**', 'shared/engines/core/vendor-client.ts', ...PLATFORM_API_CALLERS],
    rules: {
      'no-restricted-globals': [
        'error',
        {
          name: 'fetch',
          message: 'call vendors through shared/engines/core/vendor-client.ts (deadline, safe retries, EngineError)',
        },
      ],
      // The same fetch reached as a property does not slip past.
      'no-restricted-properties': [
        'error',
        ...['globalThis', 'global', 'window', 'self'].map((object) => ({
          object,
          property: 'fetch',
          message: 'call vendors through shared/engines/core/vendor-client.ts (deadline, safe retries, EngineError)',
        })),
      ],
    },
  },
  {
    // One way to fail (docs/CONTRIBUTING.md): an engine fails with EngineError, never the API's ApiError or a video
    // job's VideoFailure: the boundary maps it.
    files: ['shared/engines/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "NewExpression[callee.name=/^(ApiError|VideoFailure)$/], CallExpression[callee.object.name='ApiError']",
          message: 'engines throw EngineError (invalidInput, notConfigured, fromStatus…); the boundary maps it',
        },
      ],
    },
  },
  {
    // CLIs, benchmarks and setup scripts talk to a person on stdout.
    files: ['scripts/**', 'benchmarks/**'],
    rules: { 'no-console': 'off' },
  },
);
