/**
 * Moves files and folders by a committed map and rewrites every import that names a moved file, so a folder move
 * can be re-applied on a tree that other branches changed meanwhile (their new files import the old paths).
 *
 *   node scripts/dev/move-modules.ts [scripts/dev/module-moves.json] [--dry-run]
 *
 * The map: `moves` is a list of [old, new] repository paths (a file or a folder). The longest matching old path
 * decides where a file goes, so a folder can move as a whole while a few of its files go elsewhere. `redirects`
 * are [old, new] files where the old one only forwarded the new one's exports: imports of the old file are pointed
 * at the new one and the old file is deleted.
 *
 * Idempotent: a file already at its new place stays; a file that someone added under an old folder after the move
 * follows it; imports already pointing at new paths are left alone. Rewritten: relative specifiers in
 * import/export/import()/new URL(…, import.meta.url) of every .ts/.tsx/.js/.mjs file, and repository-root paths
 * (`shared/video/probe.ts`) in shell scripts, the Dockerfile, YAML, JSON and Markdown under docs/.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '../..');
const args = process.argv.slice(2);
const dryRun = args.includes('--dry-run');
const mapFile = resolve(ROOT, args.find((a) => !a.startsWith('--')) ?? 'scripts/dev/module-moves.json');

interface MoveMap {
  moves: [string, string][];
  redirects?: [string, string][];
}
const map = JSON.parse(readFileSync(mapFile, 'utf8')) as MoveMap;
const strip = (p: string) => p.replace(/\/+$/, '');
const moves = map.moves.map(([a, b]) => [strip(a), strip(b)] as const).sort((x, y) => y[0].length - x[0].length);
const redirects = new Map((map.redirects ?? []).map(([a, b]) => [strip(a), strip(b)] as const));

for (const [, to] of moves) {
  const clash = moves.find(([from]) => to === from || to.startsWith(`${from}/`));
  if (clash) throw new Error(`new path ${to} lies under old path ${clash[0]}: the map would not be idempotent`);
}

/** Where a repository path lives after the moves (itself when no entry names it). */
export function mapPath(p: string): string {
  const r = redirects.get(p);
  if (r) return mapPath(r);
  for (const [from, to] of moves) {
    if (p === from) return to;
    if (p.startsWith(`${from}/`)) return to + p.slice(from.length);
  }
  return p;
}

const git = (...a: string[]) => execFileSync('git', a, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
/** Tracked and untracked-but-not-ignored files, repository-relative. */
function listFiles(): string[] {
  return git('ls-files', '-co', '--exclude-standard', '-z')
    .split('\0')
    .filter((f) => f && existsSync(join(ROOT, f)) && statSync(join(ROOT, f)).isFile());
}
const tracked = new Set(git('ls-files', '-z').split('\0').filter(Boolean));

const CODE = /\.(ts|tsx|js|mjs|cjs|mts)$/;
const ROOTED = /(^|\/)(Dockerfile|[^/]*\.(sh|ya?ml|json|md))$/;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const roots = [...new Set([...moves.map(([f]) => f), ...redirects.keys()].map((f) => f.split('/')[0]!))];
/** A root path: not inside a longer path (`../shared/x` is relative, so left alone), `./` allowed before it. */
const ROOT_PATH = new RegExp(
  `((?:^|(?<=[^\\w./-]))(?:\\./)?)((?:${roots.map(escape).join('|')})/[\\w./-]*[\\w/])`,
  'gm',
);
const SELF = new Set([posix.relative(ROOT, mapFile), 'scripts/dev/move-modules.ts']);
const SPEC = [
  /(\bfrom\s*)(['"])(\.{1,2}\/[^'"]*)\2/g,
  /(\bimport\s*\(\s*)(['"])(\.{1,2}\/[^'"]*)\2/g,
  /(\bimport\s+)(['"])(\.{1,2}\/[^'"]*)\2/g,
  /(\bnew URL\(\s*)(['"])(\.{1,2}\/[^'"]*)\2(?=\s*,\s*import\.meta\.url)/g,
];

const toPosix = (p: string) => p.split('\\').join('/');
function relSpec(fromDir: string, target: string, trailingSlash: boolean): string {
  let s = toPosix(posix.relative(fromDir, target)) || '.';
  if (!s.startsWith('.')) s = `./${s}`;
  return trailingSlash && !s.endsWith('/') ? `${s}/` : s;
}

/** Where a new path came from (the inverse of mapPath; itself when no entry moved it there). */
const byTarget = [...moves].sort((x, y) => y[1].length - x[1].length);
function unmapPath(p: string): string {
  for (const [from, to] of byTarget) {
    if (p === to) return from;
    if (p.startsWith(`${to}/`)) return from + p.slice(to.length);
  }
  return p;
}

/** Whether a repository path names a file or folder of the tree as this run found it. */
const known = new Set<string>();
function exists(p: string): boolean {
  return known.has(p.replace(/\/$/, ''));
}

/** Rewrites one file's text as it will read at `newPath`, having been at `oldPath`. */
function rewrite(text: string, oldPath: string, newPath: string): string {
  // A file that git already carried to its new place (a merge's rename detection) still holds the specifiers it
  // had at its old place: a specifier that names nothing from here is read from the old place instead.
  const formerPath = unmapPath(oldPath);
  if (CODE.test(oldPath)) {
    for (const re of SPEC) {
      text = text.replace(re, (all, lead: string, q: string, spec: string) => {
        let target = posix.normalize(posix.join(posix.dirname(oldPath), spec)).replace(/\/$/, '');
        let fromFormer = false;
        if (!exists(target) && !exists(mapPath(target)) && formerPath !== oldPath) {
          const former = posix.normalize(posix.join(posix.dirname(formerPath), spec)).replace(/\/$/, '');
          if (exists(mapPath(former))) [target, fromFormer] = [former, true];
        }
        if (target.startsWith('..')) return all;
        const moved = mapPath(target);
        if (moved === target && oldPath === newPath && !fromFormer) return all;
        const next = relSpec(posix.dirname(newPath), moved, spec.endsWith('/'));
        return next === spec ? all : `${lead}${q}${next}${q}`;
      });
    }
  }
  if (ROOTED.test(oldPath) || CODE.test(oldPath)) {
    // Repository-root paths in prose, comments, scripts and configs: `shared/video/probe.ts`, `./shared/db/`.
    text = text.replace(ROOT_PATH, (all, lead: string, p: string) => {
      const slash = p.endsWith('/');
      const moved = mapPath(p.replace(/\/$/, ''));
      return moved === p.replace(/\/$/, '') ? all : `${lead}${moved}${slash ? '/' : ''}`;
    });
  }
  return text;
}

function removeEmptyDirs(dir: string): void {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return;
  for (const n of readdirSync(dir)) removeEmptyDirs(join(dir, n));
  if (readdirSync(dir).length === 0) rmdirSync(dir);
}

const files = listFiles();
for (const f of files) for (let p = f; p !== '.'; p = posix.dirname(p)) known.add(p);
let movedCount = 0;
let rewritten = 0;
let deleted = 0;
/** Files this run moved or rewrote (new paths), for the formatter. */
const written = new Set<string>();
const plan = files.map((f) => ({ from: f, to: redirects.has(f) ? null : mapPath(f) }));
for (const { from, to } of plan) {
  if (to && to !== from && existsSync(join(ROOT, to))) throw new Error(`cannot move ${from}: ${to} exists`);
}
for (const { from, to } of plan) {
  const abs = join(ROOT, from);
  const before = readFileSync(abs, 'utf8');
  if (to === null) {
    deleted++;
    if (!dryRun) {
      if (tracked.has(from)) git('rm', '-q', '-f', from);
      else execFileSync('rm', ['-f', abs]);
    }
    console.log(`delete   ${from} (its importers now use ${mapPath(from)})`);
    continue;
  }
  const after = /\0/.test(before) || SELF.has(from) ? before : rewrite(before, from, to);
  if (to !== from) {
    movedCount++;
    console.log(`move     ${from} → ${to}`);
    if (!dryRun) {
      mkdirSync(dirname(join(ROOT, to)), { recursive: true });
      if (tracked.has(from)) git('mv', from, to);
      else renameSync(abs, join(ROOT, to));
    }
  }
  if (after !== before || to !== from) written.add(to);
  if (after !== before) {
    rewritten++;
    if (!dryRun) writeFileSync(join(ROOT, to), after);
  }
}
if (!dryRun) {
  for (const [from] of [...moves, ...redirects]) {
    // The moved folder, then each parent the move left empty (shared/runtime once runtime/http and infra.ts left).
    removeEmptyDirs(join(ROOT, from));
    for (let d = posix.dirname(from); d !== '.'; d = posix.dirname(d)) removeEmptyDirs(join(ROOT, d));
  }
}
// A rewritten specifier is longer or shorter than the old one: the formatter re-wraps what it owns (and skips the
// files .prettierignore names), so the moved tree passes `prettier --check` as the old one did.
const prettier = join(ROOT, 'node_modules/.bin/prettier');
const formattable = [...written].filter((f) => /\.(ts|tsx|js|mjs|json)$/.test(f));
if (!dryRun && existsSync(prettier)) {
  for (let i = 0; i < formattable.length; i += 200) {
    execFileSync(prettier, ['--write', '--log-level', 'warn', ...formattable.slice(i, i + 200)], {
      cwd: ROOT,
      stdio: 'inherit',
    });
  }
}
console.log(
  `${movedCount} moved, ${deleted} forwarding files deleted, ${rewritten} files' paths rewritten${dryRun ? ' (dry run)' : ''}`,
);
