import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import boundaries from './eslint/role-boundaries.js';
import layers from './eslint/shared-layers.js';

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
    // shared/ in layers, each importing only the ones below: see eslint/shared-layers.js and docs/CONTRIBUTING.md.
    files: ['shared/**'],
    plugins: { layers },
    rules: { 'layers/shared-layers': 'error' },
  },
  {
    // One way each (docs/CONTRIBUTING.md): an engine fails with EngineError (never the API's ApiError or a video
    // job's VideoFailure: the boundary maps it), and reaches a vendor only through core/vendor-client.ts.
    files: ['shared/engines/**'],
    ignores: ['shared/engines/core/vendor-client.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        {
          name: 'fetch',
          message: 'call vendors through shared/engines/core/vendor-client.ts (deadline, safe retries, EngineError)',
        },
      ],
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
