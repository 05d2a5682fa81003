import { compileRe2, PatternError } from '../kernel/re2-pattern.ts';

/**
 * Agent-test patterns (`replyMatches`, `replyNeverMatches`) come from tenants and run inside the platform's
 * processes, beside other tenants' calls: they run on RE2 (re2-pattern.ts), in time linear in the text.
 */

/**
 * A pattern reads at most this many characters of the text it checks (the rest is not searched): RE2 is linear in
 * the text, and this bounds the line. docs/ops.md "Limits against hostile input".
 */
export const MAX_PATTERN_TEXT_CHARS = 20_000;

/** A compiled scenario pattern: the two calls the checks make. */
export interface ScenarioPattern {
  test(text: string): boolean;
  /** The first match (its text at [0], where it starts at `index`), or null. */
  exec(text: string): { 0: string; index: number } | null;
}

const LEADING_FLAGS = /^\(\?([a-zA-Z]+)\)/;

/**
 * Compiles a scenario pattern. A leading `(?i)` makes it case-insensitive, as in most test tools (RE2 reads inline
 * flags itself; `m` and `s` too, as before). Throws PatternError.
 */
export function compilePattern(pattern: string): ScenarioPattern {
  const flags = LEADING_FLAGS.exec(pattern)?.[1];
  if (flags !== undefined && !/^[ims]+$/.test(flags)) {
    throw new PatternError('unsupported inline flags: use (?i), (?m) or (?s)');
  }
  const re = compileRe2(pattern);
  const clip = (text: string) => (text.length > MAX_PATTERN_TEXT_CHARS ? text.slice(0, MAX_PATTERN_TEXT_CHARS) : text);
  return {
    test: (text) => re.test(clip(text)),
    exec: (text) => {
      const m = re.exec(clip(text)) as (string[] & { index?: number }) | null;
      return m ? { 0: m[0] ?? '', index: m.index ?? 0 } : null;
    },
  };
}
