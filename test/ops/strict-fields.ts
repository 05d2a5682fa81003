import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { K8sObject } from './kustomize.ts';
import { ROOT } from './kustomize.ts';

/** The TypeScript interface of each kind's model, by apiVersion/kind. */
function typeOf(o: K8sObject): { module: string; name: string } {
  const pkg = o.apiVersion.startsWith('keda.sh/') ? '@kubernetes-models/keda' : 'kubernetes-models';
  return { module: `${pkg}/${o.apiVersion}/${o.kind}`, name: `I${o.kind}` };
}

/**
 * Finds fields that no schema knows (a misspelt `readinessProbes`, a field at the wrong level), which the model
 * validators let through: each object is written as an object literal typed with its kubernetes-models
 * interface, and TypeScript's excess-property check reports every unknown key, at any depth. Returns the
 * diagnostics, one line each, naming the object.
 */
export function unknownFields(objects: K8sObject[]): string[] {
  // Inside the repository (in ignored .data/) so that the models resolve from its node_modules.
  mkdirSync(join(ROOT, '.data'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.data/ops-fields-'));
  try {
    const lines: string[] = [];
    const imports = new Map<string, string>();
    const aliases = new Map<string, string>();
    objects.forEach((o, i) => {
      const t = typeOf(o);
      if (!aliases.has(t.module)) {
        aliases.set(t.module, `T${aliases.size}`);
        imports.set(t.module, `import type { ${t.name} as ${aliases.get(t.module)} } from '${t.module}';`);
      }
      lines.push(
        `// ${o.kind}/${o.metadata.name}\nexport const o${i}: ${aliases.get(t.module)} = ${JSON.stringify(o)};`,
      );
    });
    const file = join(dir, 'objects.ts');
    writeFileSync(file, [...imports.values(), ...lines].join('\n'));
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      types: [],
    });
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1;
      const objectLine = line >= 0 ? d.file!.text.split('\n')[line - 1] : '';
      return `${objectLine?.replace('// ', '') ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
