import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'api/**/*.test.ts', 'shared/**/*.test.ts', 'workers/**/*.test.ts'],
    globalSetup: ['support/global-setup.ts'],
    // Integration tests share one machine's Postgres/Redis; each file gets its own database and key prefix.
    pool: 'forks',
    // Files share their fork's module cache (isolate: false): the platform's module graph is imported once per fork,
    // not once per file (it was half the CPU of a file that boots the platform). Each file still boots its own
    // platform with its own database and prefix; the few process-wide settings a test changes it restores.
    // Three forks on 2 cores: the suite waits on calls far more than it computes (about 290 s of CPU in a 587 s
    // run); fixed at three, since forks stopped below the maximum ended a run on tinypool's "Terminating worker
    // thread" (docs/CONTRIBUTING.md, Tests).
    poolOptions: { forks: { maxForks: 3, minForks: 3, isolate: false } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
