import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * SQL names a table only in that table's owner module (docs/CONTRIBUTING.md, "Tables and who owns them"). Every
 * string or template literal of api/, workers/ and shared/ that reads as a SQL statement is scanned for the tables
 * it names after FROM/JOIN/INTO/UPDATE/TABLE; one naming a table outside its owner fails. Another package's rows
 * are reached through the owner's function, or, inside one statement, through the SQL fragment the owner exports
 * (`heldVideoJobSql`, `developerTierSql`, `heldOrChargedSql`).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MIGRATIONS = join(ROOT, 'shared/kernel/db/migrations');

/** Table → the paths (a module, or a package folder ending in /) whose SQL may name it. */
const OWNERS: Record<string, string[]> = {
  developers: [
    'shared/kernel/db/developers.ts',
    'shared/kernel/db/api-keys.ts',
    'shared/platform/metering/accounts.ts',
  ],
  api_keys: ['shared/kernel/db/api-keys.ts'],
  idempotency_keys: ['shared/kernel/db/idempotency.ts'],
  transcription_jobs: ['shared/domains/speech/transcription-store.ts'],
  transcription_job_keys: ['shared/domains/speech/job-keys.ts'],
  // The credits package: the meter and accounts (platform/metering) and the billing domain over them.
  credit_accounts: ['shared/platform/metering/', 'shared/domains/billing/'],
  credit_ledger: ['shared/platform/metering/', 'shared/domains/billing/'],
  overage_charges: ['shared/platform/metering/', 'shared/domains/billing/'],
  billing_customers: ['shared/domains/billing/'],
  stripe_events: ['shared/domains/billing/stripe-events.ts'],
  provider_keys: ['shared/platform/keys/stored-keys.ts', 'shared/domains/billing/reencrypt-keys.ts'],
  rag_collections: ['shared/domains/rag/'],
  rag_documents: ['shared/domains/rag/'],
  rag_chunks: ['shared/domains/rag/'],
  agents: ['shared/domains/agents/db.ts'],
  agent_syncs: ['shared/domains/agents/db.ts'],
  agent_versions: ['shared/domains/agents/versions.ts'],
  agent_instances: ['shared/domains/agents/instances-db.ts'],
  agent_conversations: ['shared/domains/agents/conversations-db.ts'],
  agent_turns: ['shared/domains/agents/conversations-db.ts'],
  rt_sessions: ['shared/domains/realtime/sessions.ts', 'shared/domains/realtime/session-reads.ts'],
  rt_turns: ['shared/domains/realtime/session-trace.ts', 'shared/domains/realtime/session-reads.ts'],
  rt_tool_executions: ['shared/domains/realtime/session-trace.ts'],
  rt_interruptions: ['shared/domains/realtime/session-trace.ts', 'shared/domains/realtime/session-reads.ts'],
  rt_outbound_tasks: ['shared/domains/realtime/outbound-tasks.ts'],
  video_jobs: ['shared/domains/video/'],
  video_job_keys: ['shared/domains/video/job-keys.ts'],
  webhook_endpoints: ['shared/domains/webhooks/'],
  webhook_messages: ['shared/domains/webhooks/'],
  webhook_deliveries: ['shared/domains/webhooks/'],
  portal_sessions: ['shared/domains/portal/sessions.ts'],
  portal_settings: ['shared/domains/portal/secret.ts'],
  spending_caps: ['shared/domains/billing/spending-caps.ts'],
  session_limits: ['shared/domains/billing/spending-caps.ts'],
  campaigns: ['shared/domains/campaigns/store.ts'],
  campaign_recipients: ['shared/domains/campaigns/store.ts'],
  campaign_calls: ['shared/domains/campaigns/store.ts'],
  agent_test_runs: ['shared/domains/agent-tests/store.ts'],
  call_replays: ['shared/domains/agent-tests/replay/store.ts'],
};

function tablesInMigrations(): string[] {
  const names = new Set<string>();
  for (const f of readdirSync(MIGRATIONS).filter((n) => n.endsWith('.sql'))) {
    for (const m of readFileSync(join(MIGRATIONS, f), 'utf8').matchAll(/create table (?:if not exists )?(\w+)/gi)) {
      names.add(m[1]!.toLowerCase());
    }
  }
  return [...names].sort();
}

const STATEMENT = /\b(select|insert|update|delete)\b[\s\S]*\b(from|into|set|join|where|returning)\b/i;

/** `[table, line]` for each table a SQL statement in this source names. */
function tablesNamed(source: string, tables: readonly string[]): [string, number][] {
  const sf = ts.createSourceFile('x.ts', source, ts.ScriptTarget.Latest, true);
  const names = new RegExp(`\\b(?:from|join|into|update|table)\\s+(${tables.join('|')})\\b`, 'gi');
  const found: [string, number][] = [];
  const visit = (n: ts.Node): void => {
    let text: string | null = null;
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) text = n.text;
    else if (ts.isTemplateExpression(n))
      text = [n.head.text, ...n.templateSpans.map((s) => s.literal.text)].join(' ? ');
    if (text && STATEMENT.test(text)) {
      const line = sf.getLineAndCharacterOfPosition(n.getStart()).line + 1;
      for (const m of text.matchAll(names)) found.push([m[1]!.toLowerCase(), line]);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(join(dir, e.name))
      : /\.ts$/.test(e.name) && !/\.test\.ts$/.test(e.name)
        ? [join(dir, e.name)]
        : [],
  );
}

const owns = (path: string, table: string) =>
  (OWNERS[table] ?? []).some((o) => (o.endsWith('/') ? path.startsWith(o) : path === o));

describe('table ownership', () => {
  const tables = tablesInMigrations();

  it('names an owner for every table the migrations create', () => {
    expect(tables.length).toBeGreaterThan(25);
    expect(tables.filter((t) => !OWNERS[t])).toEqual([]);
  });

  it('finds the tables a statement names, in plain strings and templates', () => {
    const src = [
      `const a = 'select 1 from rag_collections where id = $1';`,
      'const b = `update rt_outbound_tasks set status = $2 where id = ${x}`;',
      'const c = `select v.* from video_jobs v join credit_ledger l on l.request_id = v.id`;',
      `const d = 'the agents from the docs';`,
    ].join('\n');
    expect(tablesNamed(src, tables)).toEqual([
      ['rag_collections', 1],
      ['rt_outbound_tasks', 2],
      ['video_jobs', 3],
      ['credit_ledger', 3],
    ]);
  });

  it('reports a statement outside the owner (a reconciler writing rt_outbound_tasks)', () => {
    const path = 'shared/composition/reconcile-kinds.ts';
    const src = "await db.query(`update rt_outbound_tasks set status = 'failed' where id = $1`, [id]);";
    const foreign = tablesNamed(src, tables).filter(([t]) => !owns(path, t));
    expect(foreign).toEqual([['rt_outbound_tasks', 1]]);
  });

  it('finds SQL only in the owners of the tables it names', () => {
    const files = ['api', 'workers', 'shared'].flatMap((d) => sourceFiles(join(ROOT, d)));
    expect(files.length).toBeGreaterThan(200);
    const outside: string[] = [];
    let statements = 0;
    for (const file of files) {
      const path = relative(ROOT, file).split('\\').join('/');
      for (const [table, line] of tablesNamed(readFileSync(file, 'utf8'), tables)) {
        statements++;
        if (!owns(path, table)) outside.push(`${path}:${line} names ${table} (owner: ${OWNERS[table]!.join(', ')})`);
      }
    }
    expect(statements).toBeGreaterThan(100);
    expect(outside).toEqual([]);
  });

  it('is the map docs/CONTRIBUTING.md shows: the same tables, each owner path there', () => {
    const doc = readFileSync(join(ROOT, 'docs/CONTRIBUTING.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Tables and who owns them'), doc.indexOf('## Map'));
    const rows = section.split('\n').filter((l) => /^\| `/.test(l));
    const documented = rows.flatMap((r) => [...r.split('|')[1]!.matchAll(/`(\w+)`/g)].map((m) => m[1]!));
    expect(documented.sort()).toEqual(Object.keys(OWNERS).sort());
    // Every file or folder the table names exists (brace lists expanded).
    const expand = (p: string): string[] => {
      const m = /\{([^}]*)\}/.exec(p);
      return m
        ? m[1]!.split(',').flatMap((o) => expand(p.slice(0, m.index) + o + p.slice(m.index + m[0].length)))
        : [p];
    };
    const named = rows.flatMap((r) =>
      [...r.split('|')[2]!.matchAll(/`(shared\/[^`*]+)`/g)].flatMap((m) => expand(m[1]!)),
    );
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
  });
});
