import type { StartPrivatePlatform } from '../../../shared/domains/agent-tests/execute.ts';

/**
 * A CPU worker started without a way to start private platforms (a test that runs the pool alone): agent test runs
 * and call replays fail with this instead of hanging. The platform's own start (scripts/platform.ts) always has one.
 */
export const noPrivatePlatform: StartPrivatePlatform = () =>
  Promise.reject(
    new Error('this CPU worker was started without private platforms: agent test runs and replays need one'),
  );
