import { defineConfig } from 'vitest/config';

/**
 * `npm run test:resilience`: the whole resilience suite, fault scenarios against a Postgres and a Redis that
 * each test starts (and kills) itself. `npm test` runs only its fast part (test/resilience/*.test.ts).
 */
export default defineConfig({
  test: {
    include: ['test/resilience/*.test.ts', 'test/resilience/*.resilience.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 1, minForks: 1 } },
    testTimeout: 600_000,
    hookTimeout: 300_000,
  },
});
