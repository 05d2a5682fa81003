import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The layers of shared/ (docs/CONTRIBUTING.md): each layer imports only the layers below it, so knowing where a
 * file sits tells what it may use, and a change low down never needs a file higher up.
 *
 *   composition  builds and wires: the HTTP server, the reconciler over every domain's reconcilers, engine boot
 *   domains      billing, webhooks, speech, rag, agents, video, realtime, portal
 *   engines      one interface per capability (stt, tts, llm, video…) and the vendor adapters behind it
 *   platform     what a process holds: Infra (db, redis, storage, queues), API-key auth, the credit meter, keys
 *   kernel       no domain knowledge: errors, ids, config, db pool, storage, queue core, process, net, audio, media,
 *                contracts (the API's zod schemas), observability
 *
 * Like the role boundary (./role-boundaries.js) it resolves each relative import (static, re-export or dynamic)
 * to the file it names. Folder loops inside one layer are caught by test/foundation/layers.test.ts.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const LAYERS = ['kernel', 'platform', 'engines', 'domains', 'composition'];

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
      description: 'A shared/ layer (kernel → platform → engines → domains → composition) imports only layers below it',
    },
    schema: [],
    messages: {
      upward:
        'shared/{{from}}/ must not import shared/{{to}}/: a layer imports only the layers below it ({{order}}); move the code it needs down, or this code up (imports {{target}})',
    },
  },
  create(context) {
    const file = context.filename;
    const from = layerOf(file);
    if (from < 0) return {};
    const check = (node) => {
      const source = node.source;
      if (!source || source.type !== 'Literal' || typeof source.value !== 'string') return;
      if (!source.value.startsWith('.')) return;
      const target = resolve(dirname(file), source.value);
      const to = layerOf(target);
      if (to <= from) return;
      context.report({
        node: source,
        messageId: 'upward',
        data: { from: LAYERS[from], to: LAYERS[to], order: LAYERS.join(' → '), target: relative(ROOT, target) },
      });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

export default { rules: { 'shared-layers': sharedLayers } };
