import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { runProcess } from '../../../kernel/process/spawn.ts';
import type { SttRequest } from '../types.ts';
import { DOMAIN_WEIGHT, MAX_DOMAIN_WORDS } from './build-model.ts';
import { BACKGROUND_SIZE } from './background.ts';

export type LanguageModelFiles = NonNullable<SttRequest['languageModel']>;

export interface LanguageModelsOptions {
  /** Where built models are kept, one folder per content hash. */
  dir: string;
  /** Folder of Debian's pocketsphinx-en-us (the general model and the reference dictionary). */
  modelDir: string;
  /** Characters of text a model is built from; the rest is dropped (user input: a collection can be huge). */
  maxChars: number;
  /** A build that runs longer is killed, and the general model serves on. */
  buildTimeoutMs: number;
  /**
   * Where the pruned general model every build starts from is kept (background-cache.ts): one file per general
   * model, shared by every model built on it. Default: `dir`.
   */
  backgroundDir?: string;
}

/** Bump when the builder changes what it writes, so that old models are rebuilt. */
const BUILDER_VERSION = 3;
const BUILD_CLI = fileURLToPath(new URL('./build-cli.ts', import.meta.url));

/**
 * Per-agent language models on local disk, keyed by the hash of what they are built from (so an agent's new
 * version, or its collection's new text, is a new model, and an unchanged agent never rebuilds). A build runs in
 * its own process, niced, with a time limit; builds of the same text share one run.
 */
export class LanguageModels {
  private readonly building = new Map<string, Promise<LanguageModelFiles>>();
  /** Builds run one at a time in a process (each holds ~0.6 GB and a core for seconds); the rest queue here. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: LanguageModelsOptions) {}

  /** The text a model is built from: the parts joined, capped at `maxChars`. */
  sourceText(parts: readonly string[]): string {
    let text = '';
    for (const p of parts) {
      if (text.length >= this.opts.maxChars) break;
      text += `${p.slice(0, this.opts.maxChars - text.length)}\n`;
    }
    return text;
  }

  hashOf(text: string): string {
    const recipe = JSON.stringify({ v: BUILDER_VERSION, w: DOMAIN_WEIGHT, n: MAX_DOMAIN_WORDS, b: BACKGROUND_SIZE });
    return createHash('sha256').update(recipe).update('\0').update(text).digest('hex').slice(0, 32);
  }

  /** The model for `text` if it is built already (one stat), else null. */
  async cached(text: string, label: string): Promise<LanguageModelFiles | null> {
    const files = this.filesOf(this.hashOf(text), label);
    try {
      await stat(files.dict);
      return files;
    } catch {
      return null;
    }
  }

  /** The model for `text`: the cached one, or a build (shared with any build of the same text under way). */
  async get(text: string, label: string, signal?: AbortSignal): Promise<LanguageModelFiles> {
    const hit = await this.cached(text, label);
    if (hit) return hit;
    const hash = this.hashOf(text);
    let p = this.building.get(hash);
    if (!p) {
      const run = this.queue.then(() => this.build(hash, text));
      this.queue = run.catch(() => {});
      p = run.finally(() => this.building.delete(hash));
      this.building.set(hash, p);
    }
    const files = await (signal ? abortable(p, signal) : p);
    return { ...files, label };
  }

  private filesOf(hash: string, label: string): LanguageModelFiles {
    const dir = join(this.opts.dir, hash);
    return { lm: join(dir, 'model.lm'), dict: join(dir, 'model.dict'), label };
  }

  private async build(hash: string, text: string): Promise<LanguageModelFiles> {
    const final = join(this.opts.dir, hash);
    const tmp = `${final}.tmp-${randomBytes(4).toString('hex')}`;
    await mkdir(tmp, { recursive: true });
    try {
      await writeFile(join(tmp, 'input.txt'), text);
      const out = await runProcess(
        { path: process.execPath },
        [BUILD_CLI, this.opts.modelDir, join(tmp, 'input.txt'), tmp, this.opts.backgroundDir ?? this.opts.dir],
        {
          timeoutMs: this.opts.buildTimeoutMs,
          nice: 10,
        },
      );
      if (out.code !== 0) throw new Error(`language model build failed (${out.code}): ${out.stderr.slice(-300)}`);
      await rm(join(tmp, 'input.txt'), { force: true });
      await toBinary(join(tmp, 'model.lm'), this.opts.buildTimeoutMs);
      // The dictionary is what `cached` looks for, so the folder appears whole or not at all.
      await rename(tmp, final).catch(async (e: NodeJS.ErrnoException) => {
        if (e.code !== 'ENOTEMPTY' && e.code !== 'EEXIST') throw e; // another process built it first
      });
      return this.filesOf(hash, '');
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }
}

/**
 * Replaces the ARPA text with sphinxbase's binary form when Debian's `sphinx_lm_convert` is installed
 * (sphinxbase-utils; scripts/setup.d/50-local-stt.sh): a decoder loads it in about a third of the time, and every
 * utterance of a call on the batch engine starts one. Decoders tell the two forms apart by their content, so the
 * file keeps its name. Without the tool (or when it fails) the ARPA file serves as it is.
 */
async function toBinary(arpa: string, timeoutMs: number): Promise<void> {
  const bin = `${arpa}.bin`;
  try {
    const out = await runProcess('sphinx_lm_convert', ['-i', arpa, '-o', bin], { timeoutMs, nice: 10 });
    if (out.code === 0 && (await stat(bin)).size > 0) await rename(bin, arpa);
  } catch {
    // not installed, or it failed: the ARPA model is valid as it is
  } finally {
    await rm(bin, { force: true });
  }
}

function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
