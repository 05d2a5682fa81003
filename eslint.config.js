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
    // CLIs, benchmarks and setup scripts talk to a person on stdout.
    files: ['scripts/**', 'benchmarks/**'],
    rules: { 'no-console': 'off' },
  },
);
