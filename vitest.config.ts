import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'api/**/*.test.ts', 'shared/**/*.test.ts', 'workers/**/*.test.ts'],
    globalSetup: ['support/global-setup.ts'],
    // Integration tests share one machine's Postgres/Redis; each file gets its own database and key prefix.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
