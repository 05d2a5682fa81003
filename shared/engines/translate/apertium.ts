import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../../kernel/process/spawn.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { TranslateEngine, type TranslateRequest } from './types.ts';

const MODES_DIR = '/usr/share/apertium/modes';
/** ISO 639-1 → the ISO 639-3 names some Apertium pairs use (eng-spa). */
const ISO3: Record<string, string> = { en: 'eng', es: 'spa', ca: 'cat', fr: 'fra', pt: 'por', it: 'ita', eo: 'epo' };

const base = (tag: string) => tag.toLowerCase().split(/[-_]/)[0]!;

/**
 * The `default` translator: Apertium (rule-based, local, Debian packages `apertium-en-es`, `apertium-eo-en`).
 * A pair is available when its mode file is installed (`eng-spa`, `spa-eng`, `en-eo`, `eo-en` here). Texts are
 * translated in one process run, separated by a marker line that Apertium passes through untouched.
 */
export class ApertiumTranslateEngine extends TranslateEngine {
  readonly provider = 'default';
  readonly label = 'apertium.translate';
  private modes: Set<string> | null = null;

  private installed(): Set<string> {
    this.modes ??= new Set(
      existsSync(MODES_DIR)
        ? readdirSync(MODES_DIR)
            .filter((f) => f.endsWith('.mode'))
            .map((f) => f.slice(0, -5))
        : [],
    );
    return this.modes;
  }

  modeFor(source: string, target: string): string | null {
    const s = base(source);
    const t = base(target);
    for (const cand of [`${s}-${t}`, `${ISO3[s] ?? s}-${ISO3[t] ?? t}`]) if (this.installed().has(cand)) return cand;
    return null;
  }

  supports(source: string, target: string): boolean {
    return base(source) === base(target) || this.modeFor(source, target) !== null;
  }

  pairs(): string[] {
    return [...this.installed()].filter((m) => /^[a-z]{2,3}-[a-z]{2,3}$/.test(m));
  }

  protected async _translate(req: TranslateRequest): Promise<string[]> {
    if (base(req.source) === base(req.target)) return req.texts;
    const mode = this.modeFor(req.source, req.target);
    if (!mode) {
      throw new EngineError(
        'default',
        'bad_request',
        `Apertium has no ${req.source}→${req.target} pair installed`,
        false,
      );
    }
    const SEP = '\n.¶.\n';
    const input = req.texts.map((t) => t.replace(/[\n¶]/g, ' ')).join(SEP);
    // Files, not pipes: the apertium wrapper script mishandles a non-terminal stdin when spawned without a shell.
    const dir = await mkdtemp(join(tmpdir(), 'vap-apertium-'));
    let out: string;
    try {
      await writeFile(join(dir, 'in.txt'), input);
      const r = await runProcess('apertium', ['-u', mode, join(dir, 'in.txt'), join(dir, 'out.txt')], {
        signal: req.signal,
      }).catch((e: Error) => {
        throw req.signal?.aborted ? e : EngineError.network('default', e);
      });
      if (r.code !== 0) throw new EngineError('default', 'upstream', `apertium: ${r.stderr.slice(0, 200)}`, true);
      out = await readFile(join(dir, 'out.txt'), 'utf8');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const parts = out.split(/\n?\s*\.?¶\.?\s*\n?/).map((s) => s.replace(/\s+/g, ' ').trim());
    if (parts.length !== req.texts.length) {
      // Fall back to one run per text rather than misalign segments.
      const each: string[] = [];
      for (const t of req.texts) each.push(...(await this._translate({ ...req, texts: [t] })));
      return each;
    }
    return parts;
  }
}

let shared: ApertiumTranslateEngine | null = null;
export function apertium(): ApertiumTranslateEngine {
  shared ??= new ApertiumTranslateEngine();
  return shared;
}
