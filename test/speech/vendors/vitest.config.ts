import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Vendor-adapter tests talk only to local doubles: no database, so no global setup (which would also drop
 * other runs' throwaway databases). `npx vitest run -c test/speech/vendors/vitest.config.ts`.
 */
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../../..', import.meta.url)),
    include: ['test/speech/vendors/**/*.test.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 1, minForks: 1 } },
    testTimeout: 30_000,
  },
});
