import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const OVERLAYS = ['dev', 'prod'] as const;

/** A rendered Kubernetes object; fields are read defensively by the tests. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/**
 * `kubectl kustomize` (kustomize v5): $KUBECTL, else kubectl on PATH, else the copy scripts/setup.d/90-ops.sh
 * unpacks into .data/tools/bin.
 */
export function kubectlPath(): string {
  const candidates = [process.env.KUBECTL, 'kubectl', `${ROOT}.data/tools/bin/kubectl`].filter((c): c is string => !!c);
  for (const c of candidates) {
    if (c.includes('/') && !existsSync(c)) continue;
    try {
      execFileSync(c, ['kustomize', '--help'], { stdio: 'ignore' });
      return c;
    } catch {
      // not this one
    }
  }
  throw new Error('no kubectl with kustomize found: run `bash scripts/setup.d/90-ops.sh` (or set KUBECTL)');
}

/** Parses a multi-document YAML stream, failing on any YAML error or warning, and on non-object documents. */
export function parseObjects(text: string, source: string): K8sObject[] {
  const docs = parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true });
  if (!Array.isArray(docs)) throw new Error(`${source}: not a YAML stream`);
  const out: K8sObject[] = [];
  for (const [i, doc] of docs.entries()) {
    const problems = [...doc.errors, ...doc.warnings];
    if (problems.length) throw new Error(`${source} document ${i}: ${problems.map((e) => e.message).join('; ')}`);
    const obj = doc.toJS() as unknown;
    if (obj === null || obj === undefined) continue;
    if (typeof obj !== 'object' || Array.isArray(obj)) throw new Error(`${source} document ${i}: not an object`);
    out.push(obj as K8sObject);
  }
  return out;
}

export function renderOverlay(overlay: string, kubectl = kubectlPath()): K8sObject[] {
  const dir = `${ROOT}k8s/overlays/${overlay}`;
  const text = execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return parseObjects(text, `k8s/overlays/${overlay}`);
}

export function byKind(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

export function find(objects: K8sObject[], kind: string, name: string): K8sObject {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name}`);
  return o;
}
