import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { builtinModules } from 'node:module';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocument, stringify } from 'yaml';
import { assertBillingConfig } from '../../shared/platform/metering/settings.ts';
import { assertSessionSecret } from '../../shared/domains/realtime/secret.ts';
import { loadConfig } from '../../shared/kernel/config/index.ts';
import { registry } from '../../shared/kernel/observability/metrics.ts';
import { argDefaults, expandArgs, parseDockerfile, type Stage } from './dockerfile.ts';
import { envVars } from './env-template.ts';
import { OVERLAYS, ROOT, byKind, renderOverlay } from './kustomize.ts';

const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

describe('Dockerfile', () => {
  const stages = parseDockerfile(read('Dockerfile'));
  const globalArgs = argDefaults(stages[0]!);
  const stage = (name: string) => stages.find((s) => s.name === name)!;
  /** The stage and the stages it is built FROM, base first. */
  const chain = (name: string): Stage[] => {
    const s = stage(name);
    return stages.some((x) => x.name === s.from) ? [...chain(s.from), s] : [s];
  };
  const all = (name: string, op: string) => chain(name).flatMap((s) => s.instructions.filter((i) => i.op === op));
  const aptInstalled = (name: string) =>
    new Set(
      all(name, 'RUN').flatMap((i) =>
        [...i.args.matchAll(/apt-get install((?:\s+[^\s&;|]+)+)/g)].flatMap((m) =>
          m[1]!
            .trim()
            .split(/\s+/)
            .filter((t) => !t.startsWith('-'))
            .map((t) => expandArgs(t, { ...globalArgs, ...argDefaults(stage(i.stage)) })),
        ),
      ),
    );

  it('has the CPU and GPU runtime targets on a Debian Node 24 (LTS) base', () => {
    expect(stages.map((s) => s.name)).toEqual(
      expect.arrayContaining(['os', 'deps', 'deps-gpu', 'runtime', 'os-gpu', 'runtime-gpu']),
    );
    expect(expandArgs(stage('os').from, globalArgs)).toBe('node:24-bookworm-slim');
    expect(expandArgs(stage('deps').from, globalArgs)).toBe('node:24-bookworm');
    expect(chain('runtime')[0]!.name).toBe('os');
    expect(chain('runtime-gpu').map((s) => s.name)).toEqual(['os', 'os-gpu', 'runtime-gpu']);
    for (const s of stages.slice(1)) {
      for (const c of s.instructions.filter((i) => i.op === 'COPY' && i.args.includes('--from='))) {
        const from = /--from=(\S+)/.exec(c.args)![1]!;
        expect(
          stages.slice(1, stages.indexOf(s)).map((x) => x.name),
          `${s.name} line ${c.line}`,
        ).toContain(from);
      }
    }
  });

  it('installs every runtime package of scripts/setup.sh', () => {
    const list = /APT_PACKAGES=\(([^)]*)\)/.exec(read('scripts/setup.sh'))![1]!.split(/\s+/).filter(Boolean);
    // Servers run as their own containers/services; build tools and headers (the image builds its native workers
    // in the assets stage) stay out of the runtime image.
    const notInImage = /^(redis-server|postgresql.*|build-essential|dpkg-dev|pkg-config|lib.*-dev|curl)$/;
    const wanted = list.filter((p) => !notInImage.test(p));
    expect(wanted).toEqual(expect.arrayContaining(['ffmpeg', 'flite', 'espeak-ng', 'pocketsphinx', 'tesseract-ocr']));
    for (const target of ['runtime', 'runtime-gpu']) {
      const have = aptInstalled(target);
      expect(
        wanted.filter((p) => !have.has(p)),
        target,
      ).toEqual([]);
    }
    expect([...aptInstalled('runtime-gpu')]).toEqual(
      expect.arrayContaining(['libcudnn9-cuda-12', 'cuda-cudart-12-6', 'libcublas-12-6']),
    );
  });

  it('installs npm dependencies without the CUDA download for CPU, with it for GPU', () => {
    const deps = stage('deps').instructions;
    const skip = deps.findIndex((i) => i.op === 'ENV' && /ONNXRUNTIME_NODE_INSTALL=skip/.test(i.args));
    const ci = deps.findIndex((i) => i.op === 'RUN' && /npm ci/.test(i.args));
    expect(skip).toBeGreaterThanOrEqual(0);
    expect(ci).toBeGreaterThan(skip);
    expect(stage('deps-gpu').from).toBe('deps');
    expect(stage('deps-gpu').instructions.some((i) => /ONNXRUNTIME_NODE_INSTALL=cuda12/.test(i.args))).toBe(true);
    expect(all('runtime', 'COPY').some((i) => i.args.includes('--from=deps ') && i.args.includes('node_modules'))).toBe(
      true,
    );
    expect(
      all('runtime-gpu', 'COPY').some((i) => i.args.includes('--from=deps-gpu') && i.args.includes('node_modules')),
    ).toBe(true);
  });

  it.each(['runtime', 'runtime-gpu'])('%s runs as a non-root user with a health check and tini', (target) => {
    const user = all(target, 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    const health = all(target, 'HEALTHCHECK').at(-1)?.args ?? '';
    expect(health).toContain('/healthz');
    expect(all(target, 'ENTRYPOINT').at(-1)?.args).toContain('tini');
    expect(all(target, 'CMD').at(-1)?.args).toContain('scripts/start.ts');
    expect(all(target, 'EXPOSE').map((i) => i.args)).toContain('8080');
    expect(all(target, 'ENV').some((i) => /NODE_ENV=production/.test(i.args))).toBe(true);
  });

  it('runs the set-up steps that build assets, and puts the embedding model where the manifests look', () => {
    // scripts/setup.d steps that only prepare or check a development machine (test tools, presence checks), install
    // an apt package the image's own list carries (50-local-stt.sh: sphinxbase-utils), or add an opt-in engine the
    // image leaves out (45-rhvoice.sh: RHVoice comes from Debian's non-free component, installed only on request).
    const machineOnly = new Set(['45-browser.sh', '45-rhvoice.sh', '50-local-stt.sh', '60-video.sh', '90-ops.sh']);
    const steps = readdirSync(join(ROOT, 'scripts/setup.d')).filter((f) => f.endsWith('.sh') && !machineOnly.has(f));
    const runs = stages.flatMap((st) => st.instructions.filter((i) => i.op === 'RUN').map((i) => i.args));
    for (const step of steps)
      expect(
        runs.some((r) => r.includes(`scripts/setup.d/${step}`)),
        step,
      ).toBe(true);
    const envs = (target: string) =>
      Object.fromEntries(
        all(target, 'ENV').flatMap((i) => [...i.args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!] as const)),
      );
    for (const target of ['runtime', 'runtime-gpu']) {
      const model = envs(target).EMBEDDINGS_MODEL_PATH!;
      expect(model, target).toMatch(/^\/app\/models\//);
      expect(all(target, 'COPY').some((i) => i.args.includes('--from=assets') && i.args.includes('/app/models'))).toBe(
        true,
      );
      for (const overlay of OVERLAYS) {
        const objs = renderOverlay(overlay);
        const cm = byKind(objs, 'ConfigMap').find((o) => o.metadata.name === 'vap-config') as unknown as {
          data: Record<string, string>;
        };
        expect(cm.data.EMBEDDINGS_MODEL_PATH, overlay).toBe(model);
        // A volume mounted over the model's folder would hide the file the image ships.
        const mounts = byKind(objs, 'Deployment').flatMap((d) =>
          (
            d.spec as { template: { spec: { containers: Array<{ volumeMounts?: Array<{ mountPath: string }> }> } } }
          ).template.spec.containers
            .flatMap((c) => c.volumeMounts ?? [])
            .map((m) => m.mountPath),
        );
        for (const m of mounts) expect(model.startsWith(`${m.replace(/\/$/, '')}/`), m).toBe(false);
      }
    }
  });

  it('the runtime code imports only production dependencies and files the image copies', () => {
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    const builtins = new Set(builtinModules);
    const copied = new Set(
      all('runtime', 'COPY')
        .filter((i) => !i.args.includes('--from='))
        .flatMap((i) =>
          i.args
            .split(/\s+/)
            .filter((a) => !a.startsWith('--'))
            .slice(0, -1),
        ),
    );
    expect([...copied]).toEqual(expect.arrayContaining(['api', 'shared', 'workers', 'scripts']));
    const files = ['api', 'shared', 'workers', 'scripts'].flatMap((d) =>
      readdirSync(join(ROOT, d), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.split('/').includes('__tests__'))
        .map((f) => join(d, f)),
    );
    const missing = new Set<string>();
    for (const f of files) {
      const text = read(f);
      // Value imports only: `import type` / `export type` are erased and need nothing at run time.
      const specs = [
        ...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm),
        ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
      ].map((m) => m[1]!);
      for (const spec of specs) {
        if (spec.startsWith('.')) {
          // Relative imports must stay inside the folders the image copies.
          const top = relative(ROOT, resolve(ROOT, dirname(f), spec)).split(sep)[0]!;
          if (!copied.has(top)) missing.add(`${spec} (${f}): ${top}/ is not in the image`);
          continue;
        }
        if (spec.startsWith('node:') || spec.startsWith('/')) continue;
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
        if (builtins.has(name) || pkg.dependencies[name]) continue;
        missing.add(`${name} (${f})`);
      }
    }
    expect([...missing]).toEqual([]);
  });

  it('copies only what exists and what .dockerignore lets through', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const target of ['runtime', 'runtime-gpu']) {
      for (const c of all(target, 'COPY').filter((i) => !i.args.includes('--from='))) {
        const parts = c.args.split(/\s+/).filter((p) => !p.startsWith('--'));
        for (const src of parts.slice(0, -1)) {
          expect(existsSync(join(ROOT, src)), src).toBe(true);
          expect(ignored, src).not.toContain(src);
        }
      }
    }
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', '.git', '.data', '.env']));
  });
});

/** What an operator puts in .env for the variables compose requires (${VAR:?message}). */
const dotEnv: Record<string, string> = {
  PROVIDER_KEYS_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  REALTIME_SESSION_SECRET: randomBytes(48).toString('base64'),
};

/** ${VAR:-default}, ${VAR:?error} and ${VAR} as docker compose interpolates them, with dotEnv as the environment. */
const interpolate = (v: unknown) =>
  String(v).replace(/\$\{(\w+)(?::?([-?])([^}]*))?\}/g, (_m, name: string, kind?: string, rest?: string) => {
    if (dotEnv[name] !== undefined) return dotEnv[name]!;
    if (kind === '?') throw new Error(`compose requires ${name}: ${rest}`);
    return kind === '-' ? (rest ?? '') : '';
  });

describe('docker-compose.yml', () => {
  const compose = parseDocument(read('docker-compose.yml'), { merge: true, uniqueKeys: true });
  const doc = compose.toJS() as {
    services: Record<string, Record<string, unknown> & { environment?: Record<string, unknown> }>;
  };
  const svc = doc.services;
  const envOf = (name: string) =>
    Object.fromEntries(Object.entries(svc[name]!.environment ?? {}).map(([k, v]) => [k, interpolate(v)]));

  it('parses', () => {
    expect(compose.errors).toEqual([]);
  });

  it('refuses to start without the provider-key master key instead of using the published one', () => {
    const without = { ...dotEnv };
    delete dotEnv.PROVIDER_KEYS_ENCRYPTION_KEYS;
    try {
      expect(() => envOf('vap')).toThrow(/PROVIDER_KEYS_ENCRYPTION_KEYS/);
    } finally {
      Object.assign(dotEnv, without);
    }
  });

  it('runs real Postgres with pgvector, Redis with noeviction and an S3 server', () => {
    expect(String(svc.postgres?.image)).toMatch(/^pgvector\/pgvector:/);
    expect((svc.redis?.command as string[]).join(' ')).toMatch(/--maxmemory-policy noeviction/);
    expect(String(svc.minio?.image)).toMatch(/^minio\/minio/);
    for (const s of ['postgres', 'redis', 'minio']) expect(svc[s]?.healthcheck, s).toBeDefined();
  });

  it.each(['vap', 'vap-gpu'])('service %s boots with its configuration against those services', (name) => {
    const env = envOf(name);
    const config = loadConfig(env);
    // The boot-time checks beyond the schema (production refuses the development master key and an invented
    // session-token secret).
    assertBillingConfig(config);
    assertSessionSecret(config, ['api', 'cpu', 'gpu', 'realtime']);
    expect(new URL(config.DATABASE_URL).hostname).toBe('postgres');
    expect(new URL(config.REDIS_URL).hostname).toBe('redis');
    expect(config.s3Embedded).toBe(false);
    expect(new URL(config.S3_ENDPOINT!).hostname).toBe('minio');
    expect(config.S3_ACCESS_KEY_ID).toBe(interpolate(svc.minio!.environment!.MINIO_ROOT_USER));
    expect(config.S3_SECRET_ACCESS_KEY).toBe(interpolate(svc.minio!.environment!.MINIO_ROOT_PASSWORD));
    expect(config.DATABASE_URL).toContain(`:${interpolate(svc.postgres!.environment!.POSTGRES_PASSWORD)}@`);
    const unset = envVars().filter((v) => v.required && !env[v.name]);
    expect(unset.map((v) => v.name)).toEqual([]);
    const depends = svc[name]!.depends_on as Record<string, { condition: string }>;
    for (const s of ['postgres', 'redis', 'minio']) expect(depends[s]?.condition).toBe('service_healthy');
    const target = (svc[name]!.build as { target: string }).target;
    expect(parseDockerfile(read('Dockerfile')).map((s) => s.name)).toContain(target);
    const graceS = Number(env.SHUTDOWN_GRACE_MS ?? 25_000) / 1000;
    expect(parseInt(String(svc[name]!.stop_grace_period), 10)).toBeGreaterThan(graceS);
  });
});

/** promtool from PATH or from scripts/setup.d/90-ops.sh. */
function promtool(): string {
  for (const c of [process.env.PROMTOOL, 'promtool', join(ROOT, '.data/tools/bin/promtool')]) {
    if (!c || (c.includes('/') && !existsSync(c))) continue;
    try {
      execFileSync(c, ['--version'], { stdio: 'ignore' });
      return c;
    } catch {
      // not this one
    }
  }
  throw new Error('promtool not found: run `bash scripts/setup.d/90-ops.sh` (or set PROMTOOL)');
}

/** `promtool check rules` on a file; returns its output, throws with it on failure. */
function checkRules(file: string): string {
  try {
    return execFileSync(promtool(), ['check', 'rules', file], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    throw new Error(`promtool check rules failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }
}

/** Checks that each query is valid PromQL, by checking a rule file that records each one. */
function checkQueries(queries: string[]): void {
  const dir = mkdtempSync(join(tmpdir(), 'vap-promql-'));
  try {
    const rules = queries.map((expr, i) => ({ record: `vap:check_${i}`, expr }));
    writeFileSync(join(dir, 'q.yaml'), stringify({ groups: [{ name: 'check', rules }] }));
    checkRules(join(dir, 'q.yaml'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Metric names a PromQL expression reads (identifiers directly before a selector or range). */
function metricNames(expr: string): string[] {
  const names = [...expr.matchAll(/\b([a-z_:][a-z0-9_:]*)\s*(?=\{|\[)/g)].map((m) => m[1]!);
  return names.filter((n) => !['by', 'without', 'on', 'ignoring', 'group_left', 'group_right'].includes(n));
}

function exported(name: string): boolean {
  if (name.startsWith('bullmq_')) return true; // Queue.exportPrometheusMetrics, appended on /metrics
  const base = name.replace(/_(bucket|count|sum)$/, '');
  return !!registry.getSingleMetric(name) || !!registry.getSingleMetric(base);
}

const dashboard = JSON.parse(read('deploy/grafana/vap-dashboard.json')) as {
  uid: string;
  panels: Array<{ id: number; type: string; title: string; targets?: Array<{ expr: string; refId: string }> }>;
  templating: { list: Array<{ name: string }> };
};
const dashboardExprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
const grafanaVars = (e: string) =>
  e.replaceAll('$__rate_interval', '5m').replaceAll('$__range', '1h').replaceAll('$namespace', 'vap');

describe('alert rules and dashboard', () => {
  const rulesFile = 'deploy/prometheus/vap-alerts.yaml';
  const rules = (
    parseDocument(read(rulesFile), { uniqueKeys: true }).toJS() as {
      groups: Array<{ name: string; rules: Array<Record<string, unknown>> }>;
    }
  ).groups.flatMap((g) => g.rules);

  it('alert rules pass promtool and cover backlog age, error rate and turn latency', () => {
    expect(checkRules(join(ROOT, rulesFile))).toContain('SUCCESS');
    const names = rules.map((r) => String(r.alert));
    for (const want of [/Backlog/, /ErrorRate/, /TurnLatency/]) expect(names.some((n) => want.test(n))).toBe(true);
    for (const r of rules) {
      expect(r.for, String(r.alert)).toBeDefined();
      expect(['info', 'warning', 'critical']).toContain((r.labels as { severity: string }).severity);
      expect((r.annotations as { summary?: string }).summary).toBeTruthy();
    }
  });

  it('every alert, dashboard and KEDA query reads metrics that are exported, in valid PromQL', () => {
    const keda = OVERLAYS.flatMap((o) =>
      byKind(renderOverlay(o), 'ScaledObject').flatMap((s) =>
        ((s.spec as { triggers: Array<{ metadata: { query?: string } }> }).triggers ?? [])
          .map((t) => t.metadata.query)
          .filter((q): q is string => !!q),
      ),
    );
    const exprs = [...rules.map((r) => String(r.expr)), ...dashboardExprs.map(grafanaVars), ...keda];
    const unknown = [...new Set(exprs.flatMap(metricNames))].filter((n) => !exported(n));
    expect(unknown).toEqual([]);
    checkQueries(exprs);
  });

  it('dashboard panels have unique ids and filter on the namespace variable', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(expect.arrayContaining(['datasource', 'namespace']));
    expect(dashboardExprs.length).toBeGreaterThan(10);
    for (const e of dashboardExprs) expect(e).toContain('namespace="$namespace"');
    // The metrics issue 9 asks every role to export are all on the dashboard.
    const shown = dashboardExprs.flatMap(metricNames).flatMap((n) => [n, n.replace(/_(bucket|count|sum)$/, '')]);
    for (const m of [
      'http_request_duration_seconds',
      'bullmq_job_count',
      'job_duration_seconds',
      'gpu_seconds_billed_total',
      'realtime_active_sessions',
      'turn_stage_latency_seconds',
      'webhook_deliveries_total',
    ]) {
      expect(shown, m).toContain(m);
    }
  });
});
