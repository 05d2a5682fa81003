import { parseArgs } from 'node:util';
import { mintKey } from '../shared/platform/auth/mint-key.ts';
import { reencryptProviderKeys } from '../shared/domains/billing/reencrypt-keys.ts';
import { revokeKey } from '../shared/kernel/db/api-keys.ts';
import { getDeveloper, insertDeveloper, listDevelopers, TIERS, type Tier } from '../shared/kernel/db/developers.ts';
import { migrate } from '../shared/kernel/db/migrate.ts';
import { createDb } from '../shared/kernel/db/pool.ts';
import { loadConfig } from '../shared/kernel/config/index.ts';
import { createRedis } from '../shared/kernel/redis.ts';
import { portalCommand } from './cli-portal.ts';

const USAGE = `Operator CLI (prints one JSON line per result)

  npm run cli -- developers create --name <name> [--tier starter|pro|scale]
  npm run cli -- developers list
  npm run cli -- keys create --developer <developerId> [--name <name>] [--expires-in-days <n>]
  npm run cli -- keys revoke --developer <developerId> --id <keyId>
  npm run cli -- provider-keys reencrypt [--batch <n>] [--dry-run]
      re-seals stored provider keys under the first PROVIDER_KEYS_ENCRYPTION_KEYS key; progress on stderr,
      the counts on stdout; exits 1 when a key could not be re-sealed (its ids are listed)
  npm run cli -- portal attach-phone --developer <developerId> --phone <phone>
      lets an existing developer sign in to the portal with this phone (E.164 or with country code)
  npm run cli -- portal code --phone <phone>
      the last sign-in code the development sink (PORTAL_OTP_SENDER=dev-log) sent to this phone
  npm run cli -- agents test <agentId> <files…> [--junit FILE]
      runs agent test scenarios offline (docs/agent-tests.md); exit 0 only when every expectation holds
  npm run cli -- calls replay <callId> [--version N] [--reply TEXT …] [--developer ID] [--json]
      replays a recorded call through its agent now (or version N) and prints the per-turn diff
      (docs/agent-tests.md#call-replay); exit 0 when the replay ran, 1 when it failed, 2 on bad input
`;

const [group, action, ...rest] = process.argv.slice(2);
// Agent tests take positional files and run calls: their own command module, loaded only when asked for.
if (group === 'agents' && action === 'test') {
  const { agentTestsCommand } = await import('./cli-agent-tests.ts');
  process.exit(await agentTestsCommand(rest));
}
if (group === 'calls' && action === 'replay') {
  const { callReplayCommand } = await import('./cli-call-replay.ts');
  process.exit(await callReplayCommand(rest));
}
const { values } = parseArgs({
  args: rest,
  options: {
    name: { type: 'string' },
    tier: { type: 'string', default: 'starter' },
    developer: { type: 'string' },
    id: { type: 'string' },
    'expires-in-days': { type: 'string' },
    batch: { type: 'string', default: '500' },
    'dry-run': { type: 'boolean', default: false },
    phone: { type: 'string' },
  },
});

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

const config = loadConfig();
const db = createDb(config.DATABASE_URL, 2);
try {
  await migrate(db);
  if (group === 'developers' && action === 'create') {
    if (!values.name) fail('--name is required');
    if (!TIERS.includes(values.tier as Tier)) fail(`--tier must be one of ${TIERS.join(', ')}`);
    const dev = await insertDeveloper(db, values.name, values.tier as Tier);
    const key = await mintKey(db, dev.id, 'Default');
    console.log(
      JSON.stringify({ developerId: dev.id, name: dev.name, tier: dev.tier, apiKey: key.key, keyId: key.id }),
    );
  } else if (group === 'developers' && action === 'list') {
    for (const d of await listDevelopers(db))
      console.log(JSON.stringify({ developerId: d.id, name: d.name, tier: d.tier, createdAt: d.created_at }));
  } else if (group === 'keys' && action === 'create') {
    if (!values.developer || !(await getDeveloper(db, values.developer)))
      fail('--developer must name an existing developer');
    const days = values['expires-in-days'] ? Number(values['expires-in-days']) : undefined;
    if (days !== undefined && !(Number.isInteger(days) && days >= 1 && days <= 365))
      fail('--expires-in-days must be 1-365');
    const key = await mintKey(db, values.developer, values.name ?? 'Default', days);
    console.log(
      JSON.stringify({ developerId: values.developer, keyId: key.id, apiKey: key.key, expiresAt: key.expiresAt }),
    );
  } else if (group === 'keys' && action === 'revoke') {
    if (!values.developer || !values.id) fail('--developer and --id are required');
    const revoked = await revokeKey(db, values.developer, values.id, 'revoked');
    if (!revoked) fail(`no active key ${values.id} for developer ${values.developer}`);
    // Running servers cache keys; tell them to drop this one now.
    const redis = createRedis(config.REDIS_URL, 'cli');
    await redis.publish(`${config.REDIS_PREFIX}:auth:invalidate`, `key:${revoked.key_hash.toString('hex')}`);
    redis.disconnect();
    console.log(JSON.stringify({ keyId: values.id, revoked: true }));
  } else if (group === 'provider-keys' && action === 'reencrypt') {
    const batchSize = Number(values.batch);
    if (!(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= 10_000)) fail('--batch must be 1-10000');
    const report = await reencryptProviderKeys(db, config, {
      batchSize,
      dryRun: values['dry-run'],
      onBatch: (r) =>
        console.error(
          `provider-keys reencrypt: ${r.scanned} scanned, ${r.resealed} ${r.dryRun ? 'to re-seal' : 're-sealed'}, ` +
            `${r.alreadyCurrent} already current, ${r.deleted} deleted meanwhile, ${r.failed.length} failed`,
        ),
    });
    console.log(JSON.stringify(report));
    // Non-zero so that a rollout script stops before the old master key is removed.
    if (report.failed.length > 0) process.exitCode = 1;
  } else if (group === 'portal' && (action === 'attach-phone' || action === 'code')) {
    await portalCommand(action, values, config, db, fail);
  } else {
    fail(group ? `unknown command: ${group} ${action ?? ''}` : 'no command given');
  }
} finally {
  await db.end();
}
