import { RE2JS, RE2JSException, RE2JSSyntaxException } from 're2js';

/**
 * Regular expressions written by tenants (agent-test expectations, tool-schema `pattern`s) run inside processes that
 * serve every tenant. JavaScript's RegExp backtracks: `^(a+)+$` against 30 letters and a `!` froze a process for
 * 25 s (issue #35). These run on RE2 (re2js, a pure-JS port), which matches in time linear in the text whatever the
 * pattern; the price is no backreferences or lookaround.
 */

/** The longest pattern accepted (characters). docs/ops.md "Limits against hostile input". */
export const MAX_PATTERN_CHARS = 512;

/** A pattern RE2 cannot take, with why in words (never the pattern itself: it is the caller's own input). */
export class PatternError extends Error {
  override name = 'PatternError';
}

/**
 * Compiles with RE2; PatternError otherwise, whose message is the reason alone (`longer than 512 characters`,
 * `missing closing ] (RE2: …)`), for the caller to put after its own subject.
 */
export function compileRe2(pattern: string): RE2JS {
  if (pattern.length > MAX_PATTERN_CHARS) throw new PatternError(`longer than ${MAX_PATTERN_CHARS} characters`);
  try {
    return RE2JS.compile(pattern);
  } catch (e) {
    if (!(e instanceof RE2JSException)) throw e;
    // The syntax error's description names the rule broken (`missing closing ]`), without the offending text.
    const why = e instanceof RE2JSSyntaxException ? e.getDescription() : 'cannot be compiled';
    throw new PatternError(`${why} (RE2 syntax: no backreferences or lookaround)`);
  }
}
