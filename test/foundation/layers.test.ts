import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { LAYERS } from '../../eslint/shared-layers.js';
import { folderGraph, loops, tsFiles } from '../../support/helpers/folder-graph.ts';

/**
 * shared/ in layers (eslint/shared-layers.js, docs/CONTRIBUTING.md): kernel → contracts → engines → platform →
 * domains → composition, each importing only the layers below it. The lint rule is run through ESLint with the repository's
 * config (so a rule that stopped firing, or a config that stopped applying it, fails here), and the tree itself is
 * checked for what a per-import rule cannot see: a file outside the layers, and a loop between folders of one layer.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RULE = 'layers/shared-layers';
const eslint = new ESLint({ cwd: ROOT, ruleFilter: ({ ruleId }) => ruleId === RULE });

async function crossings(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${filePath}` });
  return result!.messages.filter((m) => m.ruleId === RULE).map((m) => m.message);
}

/** `shared/<layer>/<folder>` of a file (a file directly in a layer is its own folder). */
function folderOf(file: string): string {
  const parts = file.split('/');
  return parts.slice(0, Math.min(3, parts.length)).join('/');
}

describe('shared/ layers', () => {
  it.each([
    ['shared/kernel/config/x.ts', `import { billing } from '../../domains/billing/accounts.ts';`],
    ['shared/kernel/x.ts', `import type { Infra } from '../platform/infra.ts';`],
    // Issue #30: the kernel's logger and config imported API schemas while contracts lived inside the kernel.
    ['shared/kernel/observability/x.ts', `import { byokHeaderFor } from '../../contracts/providers.ts';`],
    ['shared/kernel/config/areas/x.ts', `import type { Agent } from '../../../contracts/agents.ts';`],
    ['shared/contracts/x.ts', `import type { Infra } from '../platform/infra.ts';`],
    ['shared/contracts/x.ts', `import { buildEngines } from '../engines/engines.ts';`],
    // Issue #30: engines take plain inputs and config; Infra holds them (infra.engines), not the other way round.
    ['shared/engines/stt/x.ts', `import type { Infra } from '../../platform/infra.ts';`],
    ['shared/engines/stt/x.ts', `import { transcribe } from '../../domains/speech/transcription.ts';`],
    ['shared/engines/x.ts', `export * from '../composition/reconciler.ts';\nexport const n = 1;`],
    [
      'shared/domains/video/x.ts',
      `export { buildServer } from '../../composition/http/server.ts';\nexport const n = 1;`,
    ],
    ['shared/domains/rag/x.ts', `export const load = () => import('../../composition/reconciler.ts');`],
  ])('reports an upward import in %s', async (file, code) => {
    expect(await crossings(file, code)).toHaveLength(1);
  });

  it.each([
    ['shared/kernel/media/x.ts', `import { runProcess } from '../process/spawn.ts';`],
    ['shared/platform/x.ts', `import { createDb } from '../kernel/db/pool.ts';`],
    ['shared/contracts/x.ts', `import { vendorsWith } from '../kernel/vendors.ts';`],
    ['shared/platform/x.ts', `import type { Agent } from '../contracts/agents.ts';`],
    ['shared/platform/x.ts', `import { buildEngines } from '../engines/engines.ts';`],
    ['shared/domains/agents/x.ts', `import { searchCollection } from '../rag/search.ts';`],
    ['shared/composition/x.ts', `import { reconcileVideoJobs } from '../domains/video/reconciler.ts';`],
    ['api/x.ts', `import { buildServer } from '../shared/composition/http/server.ts';`],
  ])('allows %s to import its own layer or a lower one', async (file, code) => {
    expect(await crossings(file, code)).toEqual([]);
  });

  it('names both layers and the order in its message', async () => {
    const [msg] = await crossings('shared/engines/x.ts', `import '../domains/video/store.ts';`);
    expect(msg).toBe(
      'shared/engines/ must not import shared/domains/: a layer imports only the layers below it ' +
        '(kernel → contracts → engines → platform → domains → composition); move the code it needs down, or this code up ' +
        '(imports shared/domains/video/store.ts)',
    );
  });

  it('finds no upward import in the tree', async () => {
    const results = await eslint.lintFiles(['shared']);
    const found = results.flatMap((r) =>
      r.messages.filter((m) => m.ruleId === RULE).map((m) => `${r.filePath.slice(ROOT.length)}:${m.line} ${m.message}`),
    );
    expect(found).toEqual([]);
    expect(results.length).toBeGreaterThan(200);
  }, 300_000);

  it.each([
    ['shared/domains/billing/x.ts', `import { heldVideoJobSql } from '../video/store.ts';`],
    ['shared/domains/realtime/amd/x.ts', `import type { CampaignRow } from '../../campaigns/store.ts';`],
    ['shared/domains/speech/x.ts', `export const load = () => import('../agents/runtime.ts');`],
  ])('reports a domain importing a domain after it in the order: %s', async (file, code) => {
    const [msg, ...rest] = await crossings(file, code);
    expect(rest).toEqual([]);
    expect(msg).toMatch(
      /^shared\/domains\/[a-z-]+\/ must not import shared\/domains\/[a-z-]+\/: a domain imports only/,
    );
  });

  it('asks a new domain to be placed in the order', async () => {
    const [msg] = await crossings('shared/domains/fax/x.ts', `import { billing } from '../billing/accounts.ts';`);
    expect(msg).toMatch(/^shared\/domains\/fax\/ is not in the domain order \(billing → webhooks → /);
  });

  it.each([
    ['support/doubles/x.ts', `export * from '../../shared/kernel/audio/mulaw.ts';`],
    ['workers/realtime/codec/x.ts', `// moved\nexport { a } from './a.ts';\nexport type { B } from './a.ts';`],
    ['shared/domains/rag/x.ts', `export * as search from './search.ts';`],
  ])('refuses a forwarding file: %s', async (file, code) => {
    const [msg, ...rest] = await crossings(file, code);
    expect(rest).toEqual([]);
    expect(msg).toMatch(/^a forwarding file: it only re-exports \.\.?\//);
  });

  it.each([
    ['shared/kernel/audio/x.ts', `export * from './pcm.ts';\nexport * from './wav.ts';`],
    ['support/doubles/x.ts', `export * from './live-double.ts';\nexport const PORT = 0;`],
  ])('allows an index of several modules, or re-exports beside code: %s', async (file, code) => {
    expect(await crossings(file, code)).toEqual([]);
  });

  it('finds no forwarding file in the code', async () => {
    const results = await eslint.lintFiles(['api', 'workers', 'scripts', 'benchmarks', 'support']);
    const found = results.flatMap((r) =>
      r.messages.filter((m) => m.ruleId === RULE).map((m) => `${r.filePath.slice(ROOT.length)}: ${m.message}`),
    );
    expect(found).toEqual([]);
    expect(results.length).toBeGreaterThan(150);
  }, 300_000);

  it('keeps every shared/ file inside a layer folder', () => {
    const outside = tsFiles(join(ROOT, 'shared'))
      .map((f) => relative(ROOT, f))
      .filter((f) => !LAYERS.some((layer: string) => f.startsWith(`shared/${layer}/`)));
    expect(outside).toEqual([]);
  });

  it('has no loop between the folders of shared/', () => {
    const graph = folderGraph(ROOT, tsFiles(join(ROOT, 'shared')), folderOf, (p) => p.startsWith('shared/'));
    expect(graph.size).toBeGreaterThan(20);
    expect(loops(graph)).toEqual([]);
  });

  it('detects a folder loop when one is there', () => {
    const graph = new Map([
      ['shared/domains/rag', new Set(['shared/domains/agents', 'shared/kernel/db'])],
      ['shared/domains/agents', new Set(['shared/domains/rag'])],
    ]);
    expect(loops(graph)).toEqual([['shared/domains/agents', 'shared/domains/rag']]);
  });
});
