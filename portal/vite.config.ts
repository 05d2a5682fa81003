import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import preact from '@preact/preset-vite';
import { defineConfig, type Plugin } from 'vite';

/**
 * Writes .gz and .br siblings of every text asset once the bundle is on disk, so the api role can serve the
 * precompressed file chosen by Accept-Encoding instead of compressing on each request.
 */
function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'portal-precompress',
    apply: 'build',
    configResolved(c) {
      outDir = resolve(c.root, c.build.outDir);
    },
    async closeBundle() {
      for (const file of await listFiles(outDir)) {
        if (!/\.(js|css|html|svg|json|map)$/.test(file)) continue;
        const raw = await readFile(file);
        await writeFile(`${file}.gz`, gzipSync(raw, { level: 9 }));
        await writeFile(`${file}.br`, brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      }
    },
  };
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listFiles(p)));
    else out.push(p);
  }
  return out;
}

export default defineConfig({
  root: import.meta.dirname,
  base: '/portal/',
  plugins: [preact(), precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No data: URLs for scripts (the CSP's script-src is 'self'); the audio worklet must be a real file.
    assetsInlineLimit: 0,
    // Modern browsers only: no polyfill script, nothing inline in index.html.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: { proxy: { '/portal/api': 'http://127.0.0.1:3000', '/v1': { target: 'ws://127.0.0.1:3000', ws: true } } },
});
