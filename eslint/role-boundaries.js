import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The role boundary (docs/CONTRIBUTING.md): api/, workers/cpu, workers/gpu and workers/realtime meet only through
 * shared/ (and Postgres, Redis, S3). ESLint's no-restricted-imports matches the specifier text, which cannot tell
 * `../session/x.ts` inside workers/realtime from `../cpu/x.ts`, so this rule resolves every relative import
 * (static, re-export or dynamic) to the file it names and compares the roles of both ends.
 *
 * - api/** imports no workers/**; workers/<role>/** imports no api/** and no other workers/<role>/**;
 * - shared/** imports neither;
 * - scripts/** and benchmarks/** reach a role only through a dynamic import() (scripts/platform.ts starts them),
 *   so a process loads only the roles it runs. test/** is free: a test imports what it tests.
 * - benchmarks/** and support/** import no test/**: what both need (the platform started in-process, vendor
 *   doubles, a scripted caller) lives in support/, which tests and benchmarks may import.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** 'api' | 'cpu' | 'gpu' | 'realtime' | 'shared' | 'tooling' | 'support' | 'test' | null for a repository path. */
export function areaOf(path) {
  const rel = relative(ROOT, path).split('\\').join('/');
  if (rel.startsWith('..')) return null;
  if (rel.startsWith('api/')) return 'api';
  const worker = /^workers\/([^/]+)\//.exec(rel);
  if (worker) return worker[1];
  if (rel.startsWith('shared/')) return 'shared';
  if (rel.startsWith('scripts/') || rel.startsWith('benchmarks/')) return 'tooling';
  if (rel.startsWith('support/')) return 'support';
  if (rel.startsWith('test/')) return 'test';
  return null;
}

const ROLES = new Set(['api', 'cpu', 'gpu', 'realtime']);
const folderOf = (role) => (role === 'api' ? 'api/' : `workers/${role}/`);

function crossing(from, to, dynamic) {
  if (to === 'test' && (from === 'tooling' || from === 'support' || from === 'shared' || ROLES.has(from)))
    return `only tests import test/: move what ${from === 'support' ? 'support/' : 'this file'} needs into support/ (vendor doubles, the in-process platform, helpers)`;
  if (!ROLES.has(to) || from === to) return null;
  if (ROLES.has(from) || from === 'shared')
    return `${from === 'shared' ? 'shared/' : folderOf(from)} must not import ${folderOf(to)}: roles meet only through shared/`;
  if (from === 'tooling' && !dynamic)
    return `load the ${to} role with a dynamic import() (see scripts/platform.ts), so a process loads only the roles it runs`;
  return null;
}

export const roleBoundaries = {
  meta: {
    type: 'problem',
    docs: {
      description: 'Roles (api, workers/cpu, workers/gpu, workers/realtime) import only shared/, never each other',
    },
    schema: [],
    messages: { crossing: '{{why}} (imports {{target}})' },
  },
  create(context) {
    const file = context.filename;
    const from = areaOf(file);
    if (!from) return {};
    const check = (node, dynamic) => {
      const source = node.source;
      if (!source || source.type !== 'Literal' || typeof source.value !== 'string') return;
      if (!source.value.startsWith('.')) return;
      const target = resolve(dirname(file), source.value);
      const why = crossing(from, areaOf(target), dynamic);
      if (why) context.report({ node: source, messageId: 'crossing', data: { why, target: relative(ROOT, target) } });
    };
    return {
      ImportDeclaration: (node) => check(node, false),
      ExportNamedDeclaration: (node) => check(node, false),
      ExportAllDeclaration: (node) => check(node, false),
      ImportExpression: (node) => check(node, true),
    };
  },
};

export default { rules: { 'role-boundaries': roleBoundaries } };
