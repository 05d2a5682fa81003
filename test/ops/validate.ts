import type { K8sObject } from './kustomize.ts';

interface Model {
  validate(): void;
}
type ModelClass = new (data: never) => Model;

/** Where the model of each API group lives: kubernetes-models for the built-in kinds, KEDA's package for keda.sh. */
function modulePath(apiVersion: string): string | undefined {
  if (apiVersion.startsWith('keda.sh/')) return `@kubernetes-models/keda/${apiVersion}`;
  if (/^([a-z0-9.-]+\/)?v\d+((alpha|beta)\d+)?$/.test(apiVersion) && !apiVersion.includes('keda')) {
    return `kubernetes-models/${apiVersion}`;
  }
  return undefined;
}

/**
 * Validates one object against its schema (kubernetes-models / @kubernetes-models/keda). Throws for unknown
 * apiVersion/kind pairs and for schema violations, naming the object.
 */
export async function validateObject(obj: K8sObject): Promise<void> {
  const where = `${obj.kind ?? '?'}/${obj.metadata?.name ?? '?'} (${obj.apiVersion ?? '?'})`;
  const path = typeof obj.apiVersion === 'string' ? modulePath(obj.apiVersion) : undefined;
  let mod: Record<string, unknown> | undefined;
  if (path) mod = (await import(path).catch(() => undefined)) as Record<string, unknown> | undefined;
  const Kind = mod?.[obj.kind] as ModelClass | undefined;
  if (!Kind) throw new Error(`unknown kind ${where}`);
  try {
    new Kind(obj as never).validate();
  } catch (e) {
    throw new Error(`${where}: ${(e as Error).message}`);
  }
}
