import type { K8sObject } from './kustomize.ts';

interface Trigger {
  type: string;
  metricType?: string;
  metadata: Record<string, string>;
}
interface ScaledObjectSpec {
  scaleTargetRef: { name: string; kind?: string };
  minReplicaCount?: number;
  maxReplicaCount?: number;
  idleReplicaCount?: number;
  fallback?: { failureThreshold: number; replicas: number };
  triggers: Trigger[];
}

/**
 * The checks KEDA's admission webhook and controller make on a ScaledObject that a schema cannot express
 * (keda `apis/keda/v1alpha1`: CheckReplicaCountBoundsAreValid, CheckFallbackValid, and the webhook's
 * one-autoscaler-per-workload and cpu/memory rules). Returns one message per violation.
 */
export function kedaAdmissionErrors(objects: K8sObject[]): string[] {
  const errors: string[] = [];
  const targets = new Map<string, string[]>();
  const addTarget = (kind: string, name: string, by: string) =>
    targets.set(`${kind}/${name}`, [...(targets.get(`${kind}/${name}`) ?? []), by]);

  for (const o of objects.filter((x) => x.kind === 'HorizontalPodAutoscaler')) {
    const ref = (o.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef;
    addTarget(ref.kind, ref.name, `HorizontalPodAutoscaler/${o.metadata.name}`);
  }
  for (const o of objects.filter((x) => x.kind === 'ScaledObject')) {
    const id = `ScaledObject/${o.metadata.name}`;
    const spec = o.spec as ScaledObjectSpec;
    addTarget(spec.scaleTargetRef.kind ?? 'Deployment', spec.scaleTargetRef.name, id);
    const min = spec.minReplicaCount ?? 0;
    const max = spec.maxReplicaCount ?? 100;
    if (Math.max(min, spec.minReplicaCount === undefined ? 0 : 1) > max) errors.push(`${id}: min > max`);
    if (spec.idleReplicaCount !== undefined && spec.idleReplicaCount >= Math.max(min, 1)) {
      errors.push(`${id}: idleReplicaCount must be less than minReplicaCount`);
    }
    if (spec.fallback) {
      if (spec.fallback.failureThreshold < 0 || spec.fallback.replicas < 0) errors.push(`${id}: negative fallback`);
      for (const t of spec.triggers) {
        if (t.type === 'cpu' || t.type === 'memory') errors.push(`${id}: fallback is not supported with ${t.type}`);
        else if (t.metricType !== 'AverageValue') errors.push(`${id}: fallback needs metricType AverageValue`);
      }
    }
    const resourceTriggers = spec.triggers.filter((t) => t.type === 'cpu' || t.type === 'memory');
    if (resourceTriggers.length === spec.triggers.length && min === 0) {
      errors.push(`${id}: cannot scale to zero on cpu/memory triggers alone`);
    }
    const target = objects.find((x) => x.kind === 'Deployment' && x.metadata.name === spec.scaleTargetRef.name);
    if (!target) errors.push(`${id}: no Deployment ${spec.scaleTargetRef.name}`);
    for (const t of resourceTriggers) {
      if (!t.metricType) errors.push(`${id}: ${t.type} trigger needs metricType`);
      const containers = (
        target?.spec as { template: { spec: { containers: Array<{ resources?: { requests?: object } }> } } }
      )?.template.spec.containers;
      if (containers?.some((c) => !(c.resources?.requests && t.type in c.resources.requests))) {
        errors.push(`${id}: ${t.type} trigger on containers without ${t.type} requests`);
      }
    }
  }
  for (const [target, by] of targets) {
    if (by.length > 1) errors.push(`${target} is scaled by ${by.join(' and ')}`);
  }
  return errors;
}
