import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** The .ts files under `dir`, recursively. */
export function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : /\.ts$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/**
 * Folder → folders it imports: each relative import (static, type, re-export or dynamic) between two different
 * folders, as `folderOf` names them (repository-relative paths in, a folder name out). Imports whose target
 * `inside` refuses (outside the tree under test) are left out.
 */
export function folderGraph(
  root: string,
  files: string[],
  folderOf: (repoPath: string) => string,
  inside: (repoPath: string) => boolean,
): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  const rel = (p: string) => relative(root, p).split('\\').join('/');
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = rel(resolve(dirname(file), fileName));
      if (!inside(target)) continue;
      const [a, b] = [folderOf(rel(file)), folderOf(target)];
      if (a === b) continue;
      if (!graph.has(a)) graph.set(a, new Set());
      graph.get(a)!.add(b);
    }
  }
  return graph;
}

/** Strongly connected sets of more than one folder (Tarjan): each is a folder loop. */
export function loops(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const set: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        set.push(w);
      } while (w !== v);
      if (set.length > 1) found.push(set.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}
