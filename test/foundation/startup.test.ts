import { spawn } from 'node:child_process';
import { describe, it } from 'vitest';

/** Runs `scripts/start.ts` and collects how it ended. */
function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts', 'api'], {
    // A database nobody listens on: a configuration error must be reported before anything is reached.
    env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}

// Each test is a process of its own that loads the platform under tsx (the wait): they run side by side.
describe.concurrent('start-up configuration errors', () => {
  // Regression: production without PROVIDER_KEYS_ENCRYPTION_KEYS died with a stack trace after migrating.
  it('production without PROVIDER_KEYS_ENCRYPTION_KEYS exits 78 with one line naming the variable', async ({
    expect,
  }) => {
    const { code, stderr } = await start({
      NODE_ENV: 'production',
      PROVIDER_KEYS_ENCRYPTION_KEYS: '',
      // Set, so that only the variable under test is missing.
      REALTIME_SESSION_SECRET: 'startup-test-secret-0123456789abcdef0123456789',
    });
    expect(code).toBe(78);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^PROVIDER_KEYS_ENCRYPTION_KEYS is required in production/);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('a malformed master key is the same one-line error', async ({ expect }) => {
    const { code, stderr } = await start({ PROVIDER_KEYS_ENCRYPTION_KEYS: 'k1:c2hvcnQ=' });
    expect(code).toBe(78);
    expect(stderr.trim()).toBe('PROVIDER_KEYS_ENCRYPTION_KEYS: key "k1" must decode to 32 bytes, not 5.');
  });
});
