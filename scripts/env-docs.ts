/**
 * Writes the README's configuration table from EnvSchema (names, defaults, descriptions), between the
 * `<!-- env:start -->` and `<!-- env:end -->` markers. `npm run docs:env`; a test fails when they drift.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EnvSchema } from '../shared/kernel/config/schema.ts';
import { KEYED_VENDORS } from '../shared/contracts/providers.ts';
import { vendorEnvName } from '../shared/kernel/config/areas/providers.ts';

const README = fileURLToPath(new URL('../README.md', import.meta.url));

interface ZodLike {
  description?: string;
  _zod: { def: { type: string; defaultValue?: unknown; innerType?: ZodLike } };
}

const vendorVars = new Set(KEYED_VENDORS.flatMap((v) => [vendorEnvName(v, 'API_KEY'), vendorEnvName(v, 'BASE_URL')]));

export function envTable(): string {
  const rows = ['| Variable | Default | Description |', '|---|---|---|'];
  for (const [name, schema] of Object.entries(EnvSchema.shape as Record<string, ZodLike>)) {
    if (vendorVars.has(name)) continue;
    const def = schema._zod.def;
    const fallback = def.type === 'default' ? `\`${String(def.defaultValue) || '(empty)'}\`` : '(unset)';
    rows.push(`| \`${name}\` | ${fallback} | ${(schema.description ?? '').replace(/\|/g, '\\|')} |`);
  }
  rows.push(
    `| \`<VENDOR>_API_KEY\` | (unset) | Platform key for a vendor, used (and metered) when the caller sends none and stored none. Vendors: ${KEYED_VENDORS.map((v) => vendorEnvName(v, 'API_KEY').replace(/_API_KEY$/, '')).join(', ')}. |`,
    "| `<VENDOR>_BASE_URL` | (vendor default) | Override a vendor's API base URL (a self-hosted compatible server, or a local double in tests). |",
  );
  return rows.join('\n');
}

export function renderReadme(readme: string): string {
  return readme.replace(
    /<!-- env:start -->[\s\S]*<!-- env:end -->/,
    `<!-- env:start -->\n${envTable()}\n<!-- env:end -->`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const before = readFileSync(README, 'utf8');
  if (!before.includes('<!-- env:start -->')) throw new Error('README.md lacks the <!-- env:start --> marker');
  writeFileSync(README, renderReadme(before));
  console.log('README configuration table updated');
}
