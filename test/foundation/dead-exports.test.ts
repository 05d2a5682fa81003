import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * No dead exports: every export of the code (api, shared, workers, support, scripts) is imported by another file
 * (tests, benchmarks and the portal count) or at least used in its own file. An export nothing uses is code that
 * only looks alive. Imports are read with the TypeScript parser; re-exports and `export *` are followed, and a
 * namespace or dynamic import counts as using every export of the file.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CODE = /^(api|shared|workers|support|scripts)\//;
const SCANNED = [
  'api',
  'shared',
  'workers',
  'scripts',
  'benchmarks',
  'support',
  'test',
  'portal',
  'eslint',
  'examples',
];

function sources(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.') || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function resolveImport(spec: string, from: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return base;
}

interface Scan {
  exported: Map<string, Map<string, number>>; // file → export name → line
  used: Map<string, Set<string>>; // file → names imported from it ('*': all)
  reexports: { from: string; to: string; name: string | null; as: string | null }[];
}

function scan(): Scan {
  const s: Scan = { exported: new Map(), used: new Map(), reexports: [] };
  const use = (file: string, name: string) => {
    if (!s.used.has(file)) s.used.set(file, new Set());
    s.used.get(file)!.add(name);
  };
  for (const file of SCANNED.flatMap((d) => sources(join(ROOT, d)))) {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const own = new Map<string, number>();
    const line = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart()).line + 1;
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        const target = resolveImport(node.moduleSpecifier.text, file);
        const clause = node.importClause;
        if (target && clause?.name) use(target, 'default');
        const bindings = clause?.namedBindings;
        if (target && bindings && ts.isNamespaceImport(bindings)) use(target, '*');
        if (target && bindings && ts.isNamedImports(bindings))
          for (const e of bindings.elements) use(target, (e.propertyName ?? e.name).text);
      } else if (ts.isExportDeclaration(node)) {
        const target =
          node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)
            ? resolveImport(node.moduleSpecifier.text, file)
            : null;
        const clause = node.exportClause;
        if (target && !clause) s.reexports.push({ from: file, to: target, name: null, as: null });
        else if (target && clause && ts.isNamespaceExport(clause)) use(target, '*');
        else if (clause && ts.isNamedExports(clause)) {
          for (const e of clause.elements) {
            own.set(e.name.text, line(node));
            if (target)
              s.reexports.push({ from: file, to: target, name: (e.propertyName ?? e.name).text, as: e.name.text });
          }
        }
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] &&
        ts.isStringLiteralLike(node.arguments[0])
      ) {
        const target = resolveImport(node.arguments[0].text, file);
        if (target) use(target, '*');
      } else if (
        ts.canHaveModifiers(node) &&
        ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) &&
        !ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword)
      ) {
        if (ts.isVariableStatement(node)) {
          for (const d of node.declarationList.declarations)
            if (ts.isIdentifier(d.name)) own.set(d.name.text, line(node));
        } else {
          const name = (node as ts.Node & { name?: ts.Node }).name;
          if (name && ts.isIdentifier(name)) own.set(name.text, line(node));
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
    s.exported.set(file, own);
  }
  // A name used from a file that re-exports it is used from the file it comes from.
  for (let changed = true; changed;) {
    changed = false;
    for (const r of s.reexports) {
      const used = s.used.get(r.from);
      if (!used) continue;
      const names = r.name === null ? [...used] : used.has(r.as!) || used.has('*') ? [r.name] : [];
      for (const n of names) {
        if (s.used.get(r.to)?.has(n)) continue;
        use(r.to, n);
        changed = true;
      }
    }
  }
  return s;
}

describe('dead exports', () => {
  it('every export of the code is used somewhere', () => {
    const { exported, used } = scan();
    const dead: string[] = [];
    for (const [file, names] of exported) {
      const rel = relative(ROOT, file);
      if (!CODE.test(rel) || used.get(file)?.has('*')) continue;
      const text = readFileSync(file, 'utf8');
      for (const [name, line] of names) {
        if (used.get(file)?.has(name)) continue;
        // Used in its own file: the export is only wider than needed, not dead.
        const mentions = text.match(new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`, 'g'))?.length ?? 0;
        if (mentions <= 1) dead.push(`${rel}:${line} ${name}`);
      }
    }
    expect(dead, 'exports nothing imports or uses: delete them').toEqual([]);
  });
});
