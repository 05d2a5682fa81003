/**
 * Builds one per-agent language model in its own process (started by language-models.ts): the build reads the
 * general model and runs for seconds, which must neither block a server's event loop nor outlive its time limit.
 * Usage: node build-cli.ts <modelDir> <input text file> <output dir> [cache dir]; writes model.lm and model.dict
 * there and prints the model's statistics as JSON; the cache dir keeps the pruned general model between builds. It
 * runs under plain `node` (Node's TypeScript type stripping, no tsx), so this folder's files use erasable TypeScript
 * only (no parameter properties, enums or namespaces).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildModelFiles } from './build-model.ts';

const [modelDir, input, outDir, cacheDir] = process.argv.slice(2);
if (!modelDir || !input || !outDir) {
  process.stderr.write('usage: build-cli.ts <modelDir> <input> <outDir> [cacheDir]\n');
  process.exit(2);
}
const files = await buildModelFiles({ text: await readFile(input, 'utf8'), modelDir, cacheDir });
await writeFile(join(outDir, 'model.lm'), files.arpa);
await writeFile(join(outDir, 'model.dict'), files.dict);
process.stdout.write(`${JSON.stringify(files.stats)}\n`);
