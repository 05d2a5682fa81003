import { assertBillingConfig } from '../shared/platform/metering/settings.ts';
import { ConfigError, loadConfig } from '../shared/kernel/config/index.ts';
import { createLogger } from '../shared/kernel/observability/logger.ts';
import { assertSessionSecret } from '../shared/domains/realtime/secret.ts';
import cluster from 'node:cluster';
import { isFirstCopy, runAsPrimary } from './cluster.ts';
import { ROLES, startPlatform, type Role } from './platform.ts';

const arg = process.argv[2] ?? 'all';
const roles: Role[] = arg === 'all' ? [...ROLES] : (arg.split(',') as Role[]);
if (!roles.every((r) => (ROLES as readonly string[]).includes(r))) {
  console.error(`unknown role "${arg}"; use all, or any of ${ROLES.join(', ')}`);
  process.exit(2);
}

/** A configuration error is one message and exit code 78 (EX_CONFIG), at load or at boot, never a stack trace. */
function exitOnConfigError(e: unknown): never {
  if (e instanceof ConfigError) {
    console.error(e.message);
    process.exit(78);
  }
  throw e;
}

let config;
try {
  config = loadConfig();
  // Checked before forking copies (each copy would otherwise fail the same way and be restarted forever), and
  // before migrations or S3 start: production master keys, a whole Stripe group, the session secret.
  assertBillingConfig(config);
  assertSessionSecret(config, roles);
} catch (e) {
  exitOnConfigError(e);
}
if (config.PROCESSES > 1 && cluster.isPrimary) {
  runAsPrimary(config.PROCESSES);
} else {
  await main(config).catch(exitOnConfigError);
}

async function main(config: ReturnType<typeof loadConfig>): Promise<void> {
  const log = createLogger(config.LOG_LEVEL, { roles: roles.join(',') });
  const platform = await startPlatform(config, log, roles);
  log.info({ url: platform.url, roles }, 'platform started');
  if (roles.includes('api') && isFirstCopy()) {
    console.log(`
  Voice Agent Platform is up at ${config.PUBLIC_BASE_URL} (listening on ${platform.url})
    API docs:     ${config.PUBLIC_BASE_URL}/docs
    Get a key:    npm run cli -- developers create --name "Your Name"
    Try it:       curl -H "Authorization: Bearer <apiKey>" ${config.PUBLIC_BASE_URL}/v1/keys
`);
  }

  let signals = 0;
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.on(sig, () => {
      if (++signals > 1) process.exit(130);
      log.info({ signal: sig, graceMs: config.SHUTDOWN_GRACE_MS }, 'draining');
      platform.stop().then(
        () => process.exit(0),
        (e: Error) => {
          log.error({ err: e.message }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}
