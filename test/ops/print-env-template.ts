/**
 * Prints the ConfigMap and Secret entries that k8s/base/config.yaml and k8s/base/secrets.yaml lack, one per
 * EnvSchema variable, ready to paste: `npx tsx test/ops/print-env-template.ts` (`--all` prints every variable;
 * `--write` appends the missing entries to both files, whose data/stringData block is the last thing in them).
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { envString, envVars } from './env-template.ts';

const base = new URL('../../k8s/base/', import.meta.url);

function keysOf(file: string, field: 'data' | 'stringData'): Set<string> {
  const url = new URL(file, base);
  if (!existsSync(url)) return new Set();
  const docs = parseAllDocuments(readFileSync(url, 'utf8')).map((d) => d.toJS() as Record<string, unknown>);
  return new Set(docs.flatMap((d) => Object.keys((d?.[field] as Record<string, unknown> | undefined) ?? {})));
}

const all = process.argv.includes('--all');
const inConfig = all ? new Set<string>() : keysOf('config.yaml', 'data');
const inSecret = all ? new Set<string>() : keysOf('secrets.yaml', 'stringData');
const out: string[] = [];
const write = process.argv.includes('--write');
const vars = envVars().filter((v) => !inConfig.has(v.name) && !inSecret.has(v.name));

const entry = (name: string, value: string, description: string | undefined, required: boolean) =>
  [
    ...(description ? [`  # ${description.replace(/\s+/g, ' ')}`] : []),
    ...(required ? ['  # REQUIRED: the process does not start without it.'] : []),
    `  ${name}: ${JSON.stringify(value)}`,
  ].join('\n');

const configEntries = vars
  .filter((x) => !x.secret)
  .map((v) => entry(v.name, envString(v.defaultValue), v.description, v.required));
const secretEntries = vars.filter((x) => x.secret).map((v) => entry(v.name, '', v.description, v.required));
if (write) {
  if (configEntries.length) appendFileSync(new URL('config.yaml', base), configEntries.join('\n') + '\n');
  if (secretEntries.length) appendFileSync(new URL('secrets.yaml', base), secretEntries.join('\n') + '\n');
}
out.push(
  '# k8s/base/config.yaml, data:',
  ...configEntries,
  '',
  '# k8s/base/secrets.yaml, stringData:',
  ...secretEntries,
);
process.stdout.write(out.join('\n') + '\n');
