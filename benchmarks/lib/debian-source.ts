import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where benchmarks keep what they fetch (git-ignored: `.data` is never committed). */
export const BENCH_CACHE = resolve('.data', 'bench-cache');

/**
 * Real recordings that nobody here made, from a Debian *source* package (pocketsphinx's test data: LibriVox
 * readings and people reading card names, with transcripts), fetched once with `apt-get source --download-only`
 * and kept under `.data/bench-cache/<package>/`: only the paths asked for are unpacked from the upstream tarball,
 * the tarball itself is deleted. A benchmark calls this at start; the second run finds the cache.
 *
 * `paths`: folders inside the upstream tree (its top folder left out), e.g. `test/data/librivox`.
 * Returns the cache folder, holding those paths.
 */
export async function debianSourceFiles(pkg: string, paths: string[], signal?: AbortSignal): Promise<string> {
  if (!/^[a-z0-9][a-z0-9+.-]+$/.test(pkg)) throw new Error(`not a Debian package name: ${pkg}`);
  const dir = join(BENCH_CACHE, pkg);
  if (paths.every((p) => existsSync(join(dir, p)))) return dir;
  await mkdir(BENCH_CACHE, { recursive: true });
  const work = await mkdtemp(join(BENCH_CACHE, `${pkg}-fetch-`));
  try {
    await run('apt-get', ['source', '--download-only', pkg], { cwd: work, signal, maxBuffer: 1 << 20 }).catch(
      (e: Error & { stderr?: string }) => {
        throw new Error(
          `apt-get source ${pkg} failed (needs deb-src lines in the apt sources and the network): ` +
            `${(e.stderr ?? e.message).trim().split('\n').at(-1)}`,
        );
      },
    );
    const tarball = (await readdir(work)).find((f) => /\.orig\.tar\.(gz|xz|bz2)$/.test(f));
    if (!tarball) throw new Error(`apt-get source ${pkg}: no upstream tarball`);
    const out = join(work, 'tree');
    await mkdir(out);
    // The upstream tree has one top folder (pocketsphinx-5prealpha/): strip it, keep only what was asked for.
    await run(
      'tar',
      ['-xf', join(work, tarball), '-C', out, '--strip-components=1', '--wildcards', ...paths.map((p) => `*/${p}`)],
      {
        signal,
      },
    );
    await rm(dir, { recursive: true, force: true });
    await rename(out, dir);
    return dir;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
