import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IService } from 'kubernetes-models/v1/Service';
import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/kernel/config/index.ts';
import { registry } from '../../shared/kernel/observability/metrics.ts';
import { QUEUES, poolOf } from '../../shared/kernel/queue/define.ts';
import { envVars } from './env-template.ts';
import { OVERLAYS, byKind, find, kubectlPath, parseObjects, renderOverlay, type K8sObject } from './kustomize.ts';
import { kedaAdmissionErrors } from './keda-rules.ts';
import { unknownFields } from './strict-fields.ts';
import { validateObject } from './validate.ts';

const kubectl = kubectlPath();
const rendered = new Map<string, K8sObject[]>();
beforeAll(() => {
  for (const o of OVERLAYS) rendered.set(o, renderOverlay(o, kubectl));
});

const deployments = (objs: K8sObject[]) => byKind(objs, 'Deployment') as unknown as (IDeployment & K8sObject)[];
const scaledObjects = (objs: K8sObject[]) => byKind(objs, 'ScaledObject') as unknown as (IScaledObject & K8sObject)[];
const mainContainer = (d: IDeployment): IContainer => d.spec!.template.spec!.containers[0]!;
const envValue = (c: IContainer, name: string) => c.env?.find((e) => e.name === name)?.value;

/** The environment a Deployment's main container starts with: envFrom ConfigMaps/Secrets, then env (wins). */
function effectiveEnv(objs: K8sObject[], d: IDeployment): Record<string, string> {
  const c = mainContainer(d);
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) {
      Object.assign(env, (find(objs, 'ConfigMap', from.configMapRef.name!) as { data?: object }).data);
    }
    if (from.secretRef) {
      const s = find(objs, 'Secret', from.secretRef.name!) as { data?: Record<string, string>; stringData?: object };
      for (const [k, v] of Object.entries(s.data ?? {})) env[k] = Buffer.from(v, 'base64').toString('utf8');
      Object.assign(env, s.stringData);
    }
  }
  for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

/** Which queues a worker Deployment consumes, from its ROLE and GPU_POOLS (scripts/start.ts, workers/gpu/role.ts). */
function queuesServed(objs: K8sObject[], d: IDeployment): string[] {
  const env = effectiveEnv(objs, d);
  const role = env.ROLE ?? '';
  const pools = (env.GPU_POOLS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return QUEUES.filter((q) =>
    poolOf(q) === 'cpu'
      ? role === 'cpu' || role === 'all'
      : (role === 'gpu' || role === 'all') && (pools.length === 0 || pools.includes(q.slice(4))),
  );
}

const podMatches = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

describe('YAML parsing', () => {
  it('fails on YAML errors and duplicate keys', () => {
    expect(() => parseObjects('kind: A\n  bad: [', 'x')).toThrow();
    expect(() => parseObjects('kind: A\nkind: B\n', 'x')).toThrow(/x document 0/);
    expect(parseObjects('---\nkind: A\n---\n', 'x')).toHaveLength(1);
  });

  it('fails on unknown kinds and schema violations', async () => {
    await expect(
      validateObject({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }),
    ).rejects.toThrow(/unknown kind/);
    await expect(validateObject({ apiVersion: 'v1', kind: 'Nope', metadata: { name: 'w' } })).rejects.toThrow(
      /unknown kind/,
    );
    await expect(
      validateObject({
        apiVersion: 'keda.sh/v1alpha1',
        kind: 'ScaledObject',
        metadata: { name: 's' },
        spec: { scaleTargetRef: { name: 'x' }, triggers: [{ type: 'prometheus', metadata: { threshold: 1 } }] },
      }),
    ).rejects.toThrow(/ScaledObject\/s/);
  });
});

describe('unknown fields', () => {
  it('no rendered object has a field its schema does not know (the models do not check that)', () => {
    const all = OVERLAYS.flatMap((o) => rendered.get(o)!);
    expect(unknownFields(all)).toEqual([]);
  });

  it('reports a misspelt field at any depth, naming the object', () => {
    const dep = structuredClone(find(rendered.get('prod')!, 'Deployment', 'api')) as K8sObject & {
      spec: { template: { spec: { containers: Array<Record<string, unknown>> } } };
    };
    dep.spec.template.spec.containers[0]!.readinessProbes = {};
    const so = structuredClone(find(rendered.get('prod')!, 'ScaledObject', 'realtime')) as K8sObject & {
      spec: Record<string, unknown>;
    };
    so.spec.cooldownPeriods = 60;
    const found = unknownFields([dep, so]);
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/^Deployment\/api: .*readinessProbes/);
    expect(found[1]).toMatch(/^ScaledObject\/realtime: .*cooldownPeriods/);
  });
});

describe.each(OVERLAYS)('overlay %s', (overlay) => {
  const objs = () => rendered.get(overlay)!;
  const namespace = () => (byKind(objs(), 'Namespace')[0]?.metadata.name ?? '') as string;

  it('renders and every object validates against its schema', async () => {
    expect(objs().length).toBeGreaterThan(20);
    for (const o of objs()) await validateObject(o);
  });

  it('puts every namespaced object in the overlay namespace', () => {
    expect(namespace()).toMatch(/^vap/);
    for (const o of objs().filter((x) => x.kind !== 'Namespace')) expect(o.metadata.namespace).toBe(namespace());
  });

  it('has a Deployment for api, realtime and workers-cpu, and one per GPU pool', () => {
    const names = deployments(objs()).map((d) => d.metadata!.name);
    expect(names).toEqual(expect.arrayContaining(['api', 'realtime', 'workers-cpu']));
    for (const q of QUEUES.filter((x) => poolOf(x) === 'gpu')) expect(names).toContain(`workers-${q}`);
  });

  it.each(QUEUES)('queue %s has a worker Deployment and a ScaledObject on its BullMQ depth', (queue) => {
    const workers = deployments(objs()).filter((d) => queuesServed(objs(), d).includes(queue));
    // The CPU pool's queues (cpu, cpu-tests) are consumed by one Deployment, each with its own trigger.
    expect(workers.map((d) => d.metadata!.name)).toEqual([
      poolOf(queue) === 'cpu' ? 'workers-cpu' : `workers-${queue}`,
    ]);
    const worker = workers[0]!;
    const so = scaledObjects(objs()).filter((s) => s.spec.scaleTargetRef.name === worker.metadata!.name);
    expect(so).toHaveLength(1);
    const trigger = so[0]!.spec.triggers.find(
      (t) => t.type === 'prometheus' && (t.metadata.query ?? '').includes(`queue="${queue}"`),
    );
    const query = trigger?.metadata.query ?? '';
    // Prioritized jobs live in a sorted set, not the wait list: a Redis-list trigger would miss them.
    expect(query).toContain('bullmq_job_count');
    expect(query).toContain(`queue="${queue}"`);
    expect(query).toContain(`namespace="${namespace()}"`);
    const states = /state=~"([^"]+)"/.exec(query)?.[1]?.split('|') ?? [];
    expect(states).toEqual(expect.arrayContaining(['waiting', 'prioritized', 'active']));
    expect(Number(trigger?.metadata.threshold)).toBeGreaterThan(0);
    expect(trigger?.metadata.serverAddress).toMatch(/^https?:\/\//);
    expect(trigger?.metadata.activationThreshold).toBeDefined();
    // A pod is asked to hold at least as many jobs as it runs at once (else the pool grows while pods idle).
    const env = effectiveEnv(objs(), worker);
    const perPod =
      poolOf(queue) === 'gpu'
        ? 1
        : Number((queue === 'cpu-tests' ? env.WORKER_TESTS_CONCURRENCY : env.WORKER_CPU_CONCURRENCY) ?? 2);
    expect(Number(trigger?.metadata.threshold)).toBeGreaterThanOrEqual(perPod);
    if (poolOf(queue) === 'gpu') {
      expect(so[0]!.spec.minReplicaCount).toBe(0);
      // A GPU node needs minutes to come back; do not drop to zero between two bursts.
      expect(so[0]!.spec.cooldownPeriod).toBeGreaterThanOrEqual(300);
      expect(so[0]!.spec.maxReplicaCount).toBeGreaterThanOrEqual(1);
    } else {
      expect(so[0]!.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    }
  });

  it('GPU workers request one GPU, run on GPU nodes and own GPU_DEVICE/GPU_POOLS', () => {
    const gpu = deployments(objs()).filter((d) => effectiveEnv(objs(), d).ROLE === 'gpu');
    expect(gpu).toHaveLength(QUEUES.filter((q) => poolOf(q) === 'gpu').length);
    for (const d of gpu) {
      const c = mainContainer(d);
      const pod = d.spec!.template.spec!;
      expect(String(c.resources?.limits?.['nvidia.com/gpu'])).toBe('1');
      expect(Object.keys(pod.nodeSelector ?? {}).some((k) => k.startsWith('nvidia.com/'))).toBe(true);
      expect(pod.tolerations?.some((t) => t.key === 'nvidia.com/gpu')).toBe(true);
      expect(envValue(c, 'GPU_POOLS')).toMatch(/^[a-z]+$/);
      expect(envValue(c, 'GPU_DEVICE')).toBe('0');
      expect(c.image).toContain('vap-gpu');
    }
    for (const d of deployments(objs()).filter((x) => effectiveEnv(objs(), x).ROLE !== 'gpu')) {
      expect(mainContainer(d).resources?.limits?.['nvidia.com/gpu']).toBeUndefined();
    }
  });

  it('every Deployment probes /readyz and /healthz and drains within its grace period', () => {
    for (const d of deployments(objs())) {
      const c = mainContainer(d);
      const env = effectiveEnv(objs(), d);
      const port = Number(env.PORT ?? 8080);
      const http = c.ports?.find((p) => p.containerPort === port);
      expect(http, d.metadata!.name).toBeDefined();
      expect(c.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(c.livenessProbe?.httpGet?.path).toBe('/healthz');
      for (const p of [c.readinessProbe, c.livenessProbe]) expect([http!.name, port]).toContain(p?.httpGet?.port);
      const sleep = Number(c.lifecycle?.preStop?.exec?.command?.at(-1));
      expect(sleep).toBeGreaterThan(0);
      const graceS = Number(env.SHUTDOWN_GRACE_MS ?? 25_000) / 1000;
      // preStop runs first, then SIGTERM starts the drain of SHUTDOWN_GRACE_MS; then the process closes its pools.
      expect(d.spec!.template.spec!.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(sleep + graceS + 5);
      expect(d.spec!.template.spec!.securityContext?.runAsNonRoot).toBe(true);
      expect(c.image).toMatch(/^[\w.-]+(:\d+)?\/[\w./-]+:[\w.-]+$/);
    }
  });

  it('api drains and proxies long enough for its longest bounded synchronous request', () => {
    const api = deployments(objs()).find((d) => d.metadata!.name === 'api')!;
    const env = effectiveEnv(objs(), api);
    const config = loadConfig(env) as unknown as Record<string, unknown>;
    // Request-time bounds the config declares (an agent chat turn, an outbound fetch), whichever exist.
    const bounds = ['AGENT_TURN_TIMEOUT_MS', 'OUTBOUND_TIMEOUT_MS', 'WEBHOOK_TIMEOUT_MS']
      .map((k) => config[k])
      .filter((v): v is number => typeof v === 'number');
    const longest = Math.max(...bounds) / 1000;
    expect(Number(env.SHUTDOWN_GRACE_MS) / 1000).toBeGreaterThanOrEqual(longest);
    const ing = find(objs(), 'Ingress', 'api').metadata.annotations ?? {};
    expect(Number(ing['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThanOrEqual(longest);
  });

  it('every Deployment boots with the rendered configuration, against real S3 and databases', () => {
    for (const d of deployments(objs())) {
      const env = effectiveEnv(objs(), d);
      const config = loadConfig(env);
      // The embedded S3 server is per process: a cluster needs a shared S3 endpoint.
      expect(config.s3Embedded, d.metadata!.name).toBe(false);
      expect(config.NODE_ENV).toBe('production');
      expect(config.DATABASE_URL).not.toContain('127.0.0.1');
      expect(config.REDIS_URL).not.toContain('127.0.0.1');
      expect(env.ROLE).toMatch(/^(api|cpu|gpu|realtime|all)$/);
    }
  });

  it('has a disruption budget for every Deployment', () => {
    const pdbs = byKind(objs(), 'PodDisruptionBudget') as unknown as IPodDisruptionBudget[];
    for (const d of deployments(objs())) {
      const labels = d.spec!.template.metadata!.labels;
      const own = pdbs.filter((p) => podMatches(p.spec?.selector?.matchLabels, labels));
      expect(own, d.metadata!.name).toHaveLength(1);
    }
  });

  it('passes the checks KEDA makes on admission (bounds, fallback, one autoscaler per workload)', () => {
    expect(kedaAdmissionErrors(objs())).toEqual([]);
    // The same checks catch what KEDA would refuse.
    const rt = structuredClone(find(objs(), 'ScaledObject', 'realtime'));
    (rt.spec as Record<string, unknown>).fallback = { failureThreshold: 3, replicas: 4 };
    const hpa = structuredClone(find(objs(), 'HorizontalPodAutoscaler', 'api'));
    (hpa.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name = 'workers-cpu';
    const others = objs().filter((o) => !(o.kind === 'ScaledObject' && o.metadata.name === 'realtime'));
    expect(kedaAdmissionErrors([...others, rt, hpa])).toEqual([
      'ScaledObject/realtime: fallback is not supported with cpu',
      expect.stringMatching(/^Deployment\/workers-cpu is scaled by /),
    ]);
  });

  it('scales api on CPU and realtime on active sessions per pod', () => {
    const hpa = find(objs(), 'HorizontalPodAutoscaler', 'api') as unknown as IHorizontalPodAutoscaler;
    expect(hpa.spec?.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'api' });
    expect(hpa.spec?.metrics?.[0]?.resource?.name).toBe('cpu');
    const rt = scaledObjects(objs()).find((s) => s.spec.scaleTargetRef.name === 'realtime')!;
    const sessions = rt.spec.triggers.find((t) => t.metadata.query?.includes('realtime_active_sessions'));
    expect(sessions?.metadata.query).toContain(`namespace="${namespace()}"`);
    expect(Number(sessions?.metadata.threshold)).toBeGreaterThan(0);
    // Scale-in removes one pod at a time, slowly: each removed pod drains its calls.
    const down = rt.spec.advanced?.horizontalPodAutoscalerConfig?.behavior?.scaleDown;
    expect(down?.stabilizationWindowSeconds).toBeGreaterThanOrEqual(300);
    expect(down?.policies).toEqual([expect.objectContaining({ type: 'Pods', value: 1 })]);
  });

  it('only queries metrics that the platform exports', async () => {
    const queries = scaledObjects(objs()).flatMap((s) => s.spec.triggers.map((t) => t.metadata.query ?? ''));
    for (const name of new Set(queries.flatMap((q) => q.match(/\b[a-z_]+(?=\{)/g) ?? []))) {
      if (name.startsWith('bullmq_')) continue;
      expect(registry.getSingleMetric(name), name).toBeDefined();
    }
  });

  it('routes the WebSocket paths to realtime with long timeouts and everything else to api', () => {
    const ingresses = byKind(objs(), 'Ingress') as unknown as (IIngress & K8sObject)[];
    const services = byKind(objs(), 'Service') as unknown as IService[];
    const routes = ingresses.flatMap((ing) =>
      (ing.spec?.rules ?? []).flatMap((r) =>
        (r.http?.paths ?? []).map((p) => ({
          ing,
          host: r.host,
          path: p.path!,
          type: p.pathType,
          svc: p.backend.service,
        })),
      ),
    );
    const route = (url: string) =>
      routes
        .filter((r) =>
          r.type === 'Exact'
            ? r.path === url
            : r.type === 'Prefix'
              ? url.startsWith(r.path)
              : new RegExp(`^${r.path}`).test(url),
        )
        .sort((a, b) => b.path.length - a.path.length)[0];
    const cases: Array<[string, string]> = [
      ['/v1/sessions/twilio/stream', 'realtime'],
      ['/v1/agents/agt_01HZX/session', 'realtime'],
      ['/v1/agents/agt_01HZX/sessions', 'api'],
      ['/realtime/', 'realtime'],
      ['/realtime/app.js', 'realtime'],
      ['/v1/agents/agt_01HZX', 'api'],
      ['/v1/keys', 'api'],
      ['/healthz', 'api'],
    ];
    for (const [url, service] of cases) {
      const r = route(url);
      expect(r?.svc?.name, url).toBe(service);
      const svc = services.find((s) => s.metadata!.name === service)!;
      const port = svc.spec?.ports?.find((p) => p.name === r?.svc?.port?.name);
      expect(port, url).toBeDefined();
      if (service === 'realtime') {
        // At least the longest session the realtime config allows (1 h when it declares none).
        const rt = deployments(objs()).find((d) => d.metadata!.name === 'realtime')!;
        const maxSession = (loadConfig(effectiveEnv(objs(), rt)) as unknown as Record<string, unknown>)
          .REALTIME_MAX_SESSION_SECONDS;
        const want = typeof maxSession === 'number' ? Math.max(maxSession, 3600) : 3600;
        const a = r!.ing.metadata.annotations ?? {};
        expect(Number(a['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThanOrEqual(want);
        expect(Number(a['nginx.ingress.kubernetes.io/proxy-send-timeout'])).toBeGreaterThanOrEqual(want);
      }
    }
    const hosts = new Set(routes.map((r) => r.host));
    expect(hosts.size).toBe(1);
    const publicUrl = (find(objs(), 'ConfigMap', 'vap-config') as { data?: Record<string, string> }).data ?? {};
    expect(new URL(publicUrl.PUBLIC_BASE_URL!).host).toBe([...hosts][0]);
  });

  it('Services select their pods and target a named container port', () => {
    for (const svc of byKind(objs(), 'Service') as unknown as IService[]) {
      const pods = deployments(objs()).filter((d) => podMatches(svc.spec?.selector, d.spec!.template.metadata!.labels));
      expect(pods.map((d) => d.metadata!.name)).toEqual([svc.metadata!.name]);
      for (const p of svc.spec?.ports ?? []) {
        expect(mainContainer(pods[0]!).ports?.some((cp) => cp.name === p.targetPort)).toBe(true);
      }
    }
  });
});

describe('configuration templates', () => {
  const objs = () => rendered.get('prod')!;
  const configMap = () => (find(objs(), 'ConfigMap', 'vap-config') as { data?: Record<string, string> }).data ?? {};
  const secret = () =>
    (find(objs(), 'Secret', 'vap-secrets') as { stringData?: Record<string, string> }).stringData ?? {};

  it('lists every EnvSchema variable in the ConfigMap or the Secret template', () => {
    const missing = envVars()
      .map((v) => v.name)
      .filter((n) => !(n in configMap()) && !(n in secret()));
    expect(missing, 'add them: npx tsx test/ops/print-env-template.ts').toEqual([]);
  });

  it('keeps keys, passwords, tokens and credentialed URLs out of the ConfigMap', () => {
    const leaked = envVars()
      .filter((v) => v.secret && v.name in configMap())
      .map((v) => v.name);
    expect(leaked).toEqual([]);
  });

  it('lists nothing that EnvSchema does not read (a renamed or misspelt variable)', () => {
    const known = new Set(envVars().map((v) => v.name));
    expect([...Object.keys(configMap()), ...Object.keys(secret())].filter((k) => !known.has(k))).toEqual([]);
  });

  it('commits no real secret: every Secret template value is empty or a CHANGE_ME placeholder', () => {
    for (const overlay of OVERLAYS) {
      for (const s of byKind(rendered.get(overlay)!, 'Secret') as Array<{ stringData?: object; data?: object }>) {
        expect(s.data ?? {}).toEqual({});
        for (const [k, v] of Object.entries(s.stringData ?? {}))
          expect(String(v) === '' || /CHANGE_ME/.test(String(v)), k).toBe(true);
      }
    }
  });

  it('sets every required variable for every Deployment', () => {
    const required = envVars().filter((v) => v.required);
    for (const overlay of OVERLAYS) {
      for (const d of deployments(rendered.get(overlay)!)) {
        const env = effectiveEnv(rendered.get(overlay)!, d);
        const unset = required.filter((v) => !env[v.name]).map((v) => v.name);
        expect(unset, `${overlay} ${d.metadata!.name}`).toEqual([]);
      }
    }
  });
});
