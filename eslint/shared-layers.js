import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The layers of shared/ (docs/CONTRIBUTING.md): each layer imports only the layers below it, so knowing where a
 * file sits tells what it may use, and a change low down never needs a file higher up.
 *
 *   composition  builds and wires: the HTTP server, the reconciler over every domain's reconcilers, engine boot
 *   domains      billing → webhooks → speech → rag → agents → video → realtime → campaigns → agent-tests → portal:
 *                a domain imports only the domains before it in this order (DOMAINS)
 *   platform     what a process holds: Infra (db, redis, storage, queues, the engines), API-key auth, the credit
 *                meter, keys
 *   engines      one interface per capability (stt, tts, llm, video…) and the vendor adapters behind it; they take
 *                plain inputs and config, never Infra, and engines.ts gathers them in the one Engines container
 *   contracts    the API's zod schemas and the types both roles agree on (end reasons, provider lists): they use
 *                the kernel only, so the kernel (its logger, its config) can never depend on an API schema
 *   kernel       no domain knowledge: errors, ids, config, db pool, storage, queue core, process, net, audio, media,
 *                observability, the vendor table
 *
 * Like the role boundary (./role-boundaries.js) it resolves each relative import (static, re-export or dynamic)
 * to the file it names. Folder loops inside one layer are caught by test/foundation/layers.test.ts.
 *
 * It also refuses a forwarding file, anywhere it is applied (the code roles, shared/, scripts, benchmarks,
 * support): a file whose only statements are re-exports (`export … from`) of one module. Such a file gives one
 * module a second path, so neither a reader nor this rule sees where the code lives; import the real module
 * (scripts/dev/module-moves.json's `redirects` and scripts/dev/move-modules.ts rewrite the importers and delete
 * the file). A file that gathers several modules (an index) is not a forwarding file.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const LAYERS = ['kernel', 'contracts', 'engines', 'platform', 'domains', 'composition'];

/**
 * The domains, lowest first (docs/CONTRIBUTING.md): each may import the ones before it. campaigns and agent-tests
 * drive calls (realtime), so they sit above it; portal imports no domain and sits last.
 */
export const DOMAINS = [
  'billing',
  'webhooks',
  'speech',
  'rag',
  'agents',
  'video',
  'realtime',
  'campaigns',
  'agent-tests',
  'portal',
];

/** The domain of a repository path under shared/domains/ (its folder name), or null. */
function domainOf(path) {
  const m = /^shared\/domains\/([^/]+)\//.exec(relative(ROOT, path).split('\\').join('/'));
  return m ? m[1] : null;
}

/** The one module a file forwards (every statement an `export … from` of it), or null. */
function forwardedModule(program) {
  if (program.body.length === 0) return null;
  const sources = new Set();
  for (const s of program.body) {
    const reExport =
      (s.type === 'ExportAllDeclaration' || s.type === 'ExportNamedDeclaration') && s.source && !s.declaration;
    if (!reExport) return null;
    sources.add(s.source.value);
  }
  return sources.size === 1 ? [...sources][0] : null;
}

/** The layer of a repository path under shared/ (its index in LAYERS), or -1 outside shared/'s layers. */
export function layerOf(path) {
  const rel = relative(ROOT, path).split('\\').join('/');
  const m = /^shared\/([^/]+)\//.exec(rel);
  return m ? LAYERS.indexOf(m[1]) : -1;
}

export const sharedLayers = {
  meta: {
    type: 'problem',
    docs: {
      description:
        'A shared/ layer (kernel → contracts → engines → platform → domains → composition) imports only layers below it, a domain only the domains before it; no forwarding files',
    },
    schema: [],
    messages: {
      upward:
        'shared/{{from}}/ must not import shared/{{to}}/: a layer imports only the layers below it ({{order}}); move the code it needs down, or this code up (imports {{target}})',
      domainUpward:
        'shared/domains/{{from}}/ must not import shared/domains/{{to}}/: a domain imports only the domains before it ({{order}}); move the code it needs down, hand it in from composition/, or move this code up (imports {{target}})',
      unplacedDomain:
        'shared/domains/{{domain}}/ is not in the domain order ({{order}}): add it to DOMAINS in eslint/shared-layers.js and to docs/CONTRIBUTING.md',
      forwarding:
        'a forwarding file: it only re-exports {{target}}; import that module where this one is imported and delete this file (scripts/dev/module-moves.json `redirects` does both)',
    },
  },
  create(context) {
    const file = context.filename;
    const from = layerOf(file);
    const fromDomain = domainOf(file);
    const forwarding = {
      Program(program) {
        const target = forwardedModule(program);
        if (target !== null) context.report({ node: program, messageId: 'forwarding', data: { target } });
      },
    };
    if (from < 0) return forwarding;
    const order = DOMAINS.join(' → ');
    const check = (node) => {
      const source = node.source;
      if (!source || source.type !== 'Literal' || typeof source.value !== 'string') return;
      if (!source.value.startsWith('.')) return;
      const target = resolve(dirname(file), source.value);
      const to = layerOf(target);
      const toDomain = domainOf(target);
      if (fromDomain && toDomain && fromDomain !== toDomain) {
        const unplaced = [fromDomain, toDomain].find((d) => !DOMAINS.includes(d));
        if (unplaced) {
          context.report({ node: source, messageId: 'unplacedDomain', data: { domain: unplaced, order } });
        } else if (DOMAINS.indexOf(toDomain) > DOMAINS.indexOf(fromDomain)) {
          context.report({
            node: source,
            messageId: 'domainUpward',
            data: { from: fromDomain, to: toDomain, order, target: relative(ROOT, target) },
          });
        }
        return;
      }
      if (to <= from) return;
      context.report({
        node: source,
        messageId: 'upward',
        data: { from: LAYERS[from], to: LAYERS[to], order: LAYERS.join(' → '), target: relative(ROOT, target) },
      });
    };
    return {
      ...forwarding,
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

export default { rules: { 'shared-layers': sharedLayers } };
