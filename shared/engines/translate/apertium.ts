import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../../kernel/process/spawn.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { TranslateEngine, type TranslateRequest } from './types.ts';

const MODES_DIR = '/usr/share/apertium/modes';
/** ISO 639-1 → the ISO 639-3 names some Apertium pairs use (eng-spa). */
const ISO3: Record<string, string> = {
  en: 'eng',
  es: 'spa',
  ca: 'cat',
  fr: 'fra',
  pt: 'por',
  it: 'ita',
  eo: 'epo',
  gl: 'glg',
  ro: 'ron',
  eu: 'eus',
  oc: 'oci',
  an: 'arg',
  ast: 'ast',
};
const ISO1 = Object.fromEntries(Object.entries(ISO3).map(([k, v]) => [v, k]));
/** Languages tried first as the middle of a pivot: most Apertium pairs are built around Spanish, then English. */
const PIVOTS = ['es', 'en'];
/** At most this many pairs chained for one translation (each hop loses a little). */
const MAX_HOPS = 3;

const base = (tag: string) => tag.toLowerCase().split(/[-_]/)[0]!;
const iso1 = (code: string) => ISO1[code] ?? code;

/** One installed Apertium pair, by the ISO 639-1 codes of its ends. */
export interface ApertiumHop {
  source: string;
  target: string;
  mode: string;
}

/**
 * The `default` translator: Apertium (rule-based, local, Debian packages `apertium-en-es`, `apertium-eo-en`, …).
 * A pair is available when its mode file is installed (`eng-spa`, `spa-eng`, `en-eo`, `eo-en` here). Where no
 * pair joins two languages directly, the translation pivots through installed pairs, through Spanish first (the
 * hub of most Apertium pairs: en→pt is en-es then es-pt), then English (es→eo is es-en then en-eo). Texts are
 * translated in one process run per pair, separated by a marker line that Apertium passes through untouched.
 */
export class ApertiumTranslateEngine extends TranslateEngine {
  readonly provider = 'default';
  readonly label = 'apertium.translate';
  private edges: Map<string, ApertiumHop[]> | null = null;

  constructor(private readonly modesDir = MODES_DIR) {
    super();
  }

  /** Installed pairs, as hops from each source language (the first mode found for a pair wins). */
  private graph(): Map<string, ApertiumHop[]> {
    if (this.edges) return this.edges;
    const modes = existsSync(this.modesDir)
      ? readdirSync(this.modesDir)
          .filter((f) => f.endsWith('.mode'))
          .map((f) => f.slice(0, -5))
          .sort()
      : [];
    const edges = new Map<string, ApertiumHop[]>();
    for (const mode of modes) {
      const m = /^([a-z]{2,3})-([a-z]{2,3})$/.exec(mode);
      if (!m) continue; // variants (`eo-en-compounds`, `spa-eng_US`, debug modes) are not pairs of their own
      const hop = { source: iso1(m[1]!), target: iso1(m[2]!), mode };
      const from = edges.get(hop.source) ?? [];
      if (!from.some((h) => h.target === hop.target)) from.push(hop);
      edges.set(hop.source, from);
    }
    this.edges = edges;
    return edges;
  }

  /**
   * The pairs that take `source` to `target`: [] for the same language, one hop for an installed pair, else the
   * shortest chain (pivoting through Spanish, then English, then any language); null when none exists.
   */
  route(source: string, target: string): ApertiumHop[] | null {
    const s = base(source);
    const t = base(target);
    if (s === t) return [];
    const graph = this.graph();
    const rank = (l: string) => (PIVOTS.includes(l) ? PIVOTS.indexOf(l) : PIVOTS.length);
    let frontier: { at: string; path: ApertiumHop[] }[] = [{ at: s, path: [] }];
    const seen = new Set([s]);
    for (let depth = 0; depth < MAX_HOPS && frontier.length; depth++) {
      const next: typeof frontier = [];
      for (const { at, path } of frontier) {
        const hops = [...(graph.get(at) ?? [])].sort((a, b) => rank(a.target) - rank(b.target));
        const direct = hops.find((h) => h.target === t);
        if (direct) return [...path, direct];
        for (const h of hops) {
          if (seen.has(h.target)) continue;
          seen.add(h.target);
          next.push({ at: h.target, path: [...path, h] });
        }
      }
      frontier = next;
    }
    return null;
  }

  /** Whether `source` can be translated to `target`, directly or through a pivot. */
  supports(source: string, target: string): boolean {
    return this.route(source, target) !== null;
  }

  /** Whether some installed language translates into `target` (for a source that is detected later). */
  reaches(target: string): boolean {
    const t = base(target);
    return [...this.graph().keys()].some((s) => s === t || this.route(s, t) !== null);
  }

  /** The installed pairs as `source-target` ISO 639-1 codes, for error messages (`en-es, es-en, …`). */
  pairs(): string[] {
    return [...this.graph().values()].flatMap((hops) => hops.map((h) => `${h.source}-${h.target}`)).sort();
  }

  protected async _translate(req: TranslateRequest): Promise<string[]> {
    const route = this.route(req.source, req.target);
    if (!route) {
      throw new EngineError(
        'default',
        'bad_request',
        `Apertium has no ${req.source}→${req.target} pair installed, directly or through another language (installed: ${this.pairs().join(', ')})`,
        false,
      );
    }
    let texts = req.texts;
    for (const hop of route) texts = await this.runMode(hop.mode, texts, req.signal);
    return texts;
  }

  private async runMode(mode: string, texts: string[], signal: AbortSignal | undefined): Promise<string[]> {
    const SEP = '\n.¶.\n';
    const input = texts.map((t) => t.replace(/[\n¶]/g, ' ')).join(SEP);
    // Files, not pipes: the apertium wrapper script mishandles a non-terminal stdin when spawned without a shell.
    const dir = await mkdtemp(join(tmpdir(), 'vap-apertium-'));
    let out: string;
    try {
      await writeFile(join(dir, 'in.txt'), input);
      const r = await runProcess('apertium', ['-u', mode, join(dir, 'in.txt'), join(dir, 'out.txt')], {
        signal,
      }).catch((e: Error) => {
        throw signal?.aborted ? e : EngineError.network('default', e);
      });
      if (r.code !== 0) throw new EngineError('default', 'upstream', `apertium: ${r.stderr.slice(0, 200)}`, true);
      out = await readFile(join(dir, 'out.txt'), 'utf8');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const parts = out.split(/\n?\s*\.?¶\.?\s*\n?/).map((s) => s.replace(/\s+/g, ' ').trim());
    if (parts.length === texts.length) return parts;
    // Fall back to one run per text rather than misalign segments.
    const each: string[] = [];
    for (const t of texts)
      each.push(...(texts.length === 1 ? [parts.join(' ')] : await this.runMode(mode, [t], signal)));
    return each;
  }
}

let shared: ApertiumTranslateEngine | null = null;
export function apertium(): ApertiumTranslateEngine {
  shared ??= new ApertiumTranslateEngine();
  return shared;
}
