import { assertBillingConfig } from '../shared/platform/metering/settings.ts';
import { ConfigError, loadConfig } from '../shared/kernel/config/index.ts';
import { createLogger } from '../shared/kernel/observability/logger.ts';
import { assertSessionSecret } from '../shared/domains/realtime/secret.ts';
import cluster from 'node:cluster';
import { isFirstCopy, runAsPrimary } from './cluster.ts';
import { ROLES, startPlatform, type Role } from './platform.ts';
import { startTestsProcess, type TestsProcess } from './tests-process.ts';
import { resolveBatchCpus } from '../shared/kernel/process/cpu-affinity.ts';

const arg = process.argv[2] ?? 'all';
const roles: Role[] = arg === 'all' ? ROLES.filter((r) => r !== 'tests') : (arg.split(',') as Role[]);
if (!roles.every((r) => (ROLES as readonly string[]).includes(r))) {
  console.error(`unknown role "${arg}"; use all, or any of ${ROLES.join(', ')}`);
  process.exit(2);
}
// Where the cpu role shares this process with live calls (api or realtime: `all`, `api,cpu,realtime`), its test pool
// (users' agent test runs and call replays, queue cpu-tests) runs in a child process of its own at lower priority,
// so that it never shares their event loop (scripts/tests-process.ts). Naming `tests` among the roles keeps it here.
const testsInChild =
  roles.includes('cpu') && !roles.includes('tests') && (roles.includes('api') || roles.includes('realtime'));

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
  // The primary forks the test pool's process once; the copies it forks leave queue cpu-tests to it.
  const tests = testsInChild
    ? startTestsProcess(testsEnv(null), primaryLog(config), config.SHUTDOWN_GRACE_MS, testsCpus(config))
    : null;
  runAsPrimary(config.PROCESSES, async () => tests?.stop());
} else {
  await main(config).catch(exitOnConfigError);
}

async function main(config: ReturnType<typeof loadConfig>): Promise<void> {
  const log = createLogger(config.LOG_LEVEL, { roles: roles.join(',') });
  const platform = await startPlatform(config, log, roles, { testPoolElsewhere: testsInChild });
  log.info({ url: platform.url, roles }, 'platform started');
  // The test pool's own process tells its parent it is up (scripts/tests-process.ts), so the parent can wait for it.
  if (arg === 'tests' && process.send) process.send({ type: 'tests-ready' });
  // Started once migrations ran and the embedded S3 listens, so the child finds both ready.
  let tests: TestsProcess | null = null;
  if (testsInChild && cluster.isPrimary) {
    tests = startTestsProcess(
      testsEnv(platform.infra.embeddedS3?.endpoint ?? null),
      log,
      config.SHUTDOWN_GRACE_MS,
      platform.infra.engines.batchCpus.pinning,
    );
  }
  // A forked `tests` process drains when its parent goes (the IPC channel closes), so it never outlives it.
  if (process.channel && !cluster.isWorker) process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
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
      Promise.all([platform.stop(), tests?.stop()]).then(
        () => process.exit(0),
        (e: Error) => {
          log.error({ err: e.message }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

/** The test pool process's environment: this one's, on a port of its own, one copy, sharing the embedded S3. */
function testsEnv(s3Endpoint: string | null): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', PROCESSES: '1' };
  if (s3Endpoint) env.S3_EMBEDDED_PORT = new URL(s3Endpoint).port;
  return env;
}

/** The cluster primary has no platform (no engines) of its own: it places the test pool's process itself. */
function testsCpus(config: ReturnType<typeof loadConfig>) {
  return resolveBatchCpus(config.SPEECH_LOCAL_BATCH_CPUS).pinning;
}

function primaryLog(config: ReturnType<typeof loadConfig>) {
  return createLogger(config.LOG_LEVEL, { roles: 'primary' });
}
