import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import addFormats from 'ajv-formats';
import type { RE2JS } from 're2js';
import safeRegex from 'safe-regex2';
import { compileRe2, PatternError } from '../../../kernel/re2-pattern.ts';

/**
 * A tool's `parameters` JSON Schema, compiled with Ajv. Agents are checked when saved (a schema that does not
 * compile is a 400) and the model's arguments are checked against it before a tool runs, so a tool endpoint
 * only ever receives arguments that match what it declared.
 */
export type CompiledSchema = { ok: true; validate: ValidateFunction } | { ok: false; error: string };

type Draft = '2020-12' | 'draft-07';

/** Compiled schemas kept, keyed by their JSON (agent rows are read per request, so object identity is useless). */
const MAX_CACHED = 256;
/** Errors listed in one tool error: enough for the model to fix its call, short enough to read. */
const MAX_LISTED_ERRORS = 3;
const MAX_MESSAGE_CHARS = 400;

// strict:false: vendors accept keywords Ajv does not know, and those must not make a tool unusable.
// logger:false: an ignored keyword is not worth a log line. allErrors: the model fixes every problem in one retry.
const BASE_OPTIONS: Options = { strict: false, allErrors: true, logger: false };

const cache = new Map<string, CompiledSchema>();
const metaValidators = new Map<Draft, Ajv>();

/** Compiles (or returns the cached) validator for a tool's parameters; never throws. */
export function compileToolSchema(schema: Record<string, unknown>): CompiledSchema {
  const key = JSON.stringify(schema);
  const hit = cache.get(key);
  if (hit) {
    // Re-insert so the Map's order is least recently used first.
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const compiled = compileUncached(schema);
  cache.set(key, compiled);
  if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value as string);
  return compiled;
}

/**
 * The tool error for arguments the tool's schema rejects (the model sees it and may call again); null when
 * they match.
 */
export function argumentProblem(schema: Record<string, unknown>, args: unknown): string | null {
  const compiled = compileToolSchema(schema);
  // Only agents saved before schemas were checked get here: no arguments can be vouched for, so none are sent.
  if (!compiled.ok) return `the tool's parameters are not a usable JSON Schema: ${compiled.error}`;
  if (compiled.validate(args)) return null;
  return `arguments do not match the tool's parameters: ${describeErrors(compiled.validate.errors ?? [])}`;
}

function compileUncached(schema: Record<string, unknown>): CompiledSchema {
  const draft = draftOf(schema.$schema);
  if (!draft)
    return {
      ok: false,
      error: `unsupported $schema ${clip(JSON.stringify(schema.$schema), 100)} (use 2020-12 or draft-07)`,
    };
  const meta = metaValidator(draft);
  if (!meta.validateSchema(schema)) {
    // Only the first error: the rest are usually the same mistake seen through anyOf branches.
    return { ok: false, error: describeErrors((meta.errors ?? []).slice(0, 1)) };
  }
  try {
    const validate = isolatedAjv(draft).compile(schema);
    // An async schema's validator returns a promise, which is truthy: it would pass every argument.
    if ((validate as { $async?: boolean }).$async) return { ok: false, error: '"$async" schemas are not supported' };
    return { ok: true, validate };
  } catch (e) {
    return { ok: false, error: clip((e as Error).message || 'the schema does not compile', MAX_MESSAGE_CHARS) };
  }
}

/** No `$schema` means 2020-12, the draft the LLM vendors document; draft-07 is common in older tool specs. */
function draftOf(uri: unknown): Draft | null {
  if (uri === undefined) return '2020-12';
  if (typeof uri !== 'string') return null;
  if (/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/.test(uri)) return '2020-12';
  if (/^https?:\/\/json-schema\.org\/draft-07\/schema#?$/.test(uri)) return 'draft-07';
  return null;
}

/** One long-lived instance per draft, used only to check schemas against the meta-schema (registers none). */
function metaValidator(draft: Draft): Ajv {
  let ajv = metaValidators.get(draft);
  if (!ajv) {
    ajv = newAjv(draft, BASE_OPTIONS);
    metaValidators.set(draft, ajv);
  }
  return ajv;
}

/**
 * A fresh instance per schema (~0.3 ms, then cached): developers' schemas never see each other's `$id`s, and
 * nothing accumulates in a long-lived instance. The meta-schema check has already run.
 */
function isolatedAjv(draft: Draft): Ajv {
  const ajv = newAjv(draft, { ...BASE_OPTIONS, meta: false, validateSchema: false, code: { regExp: safeRegExp } });
  addFormats.default(ajv);
  return ajv;
}

function newAjv(draft: Draft, options: Options): Ajv {
  return draft === 'draft-07' ? new Ajv(options) : new Ajv2020(options);
}

/**
 * Patterns come from developers and run on model output (which a scripted or prompted model controls) inside the
 * API and realtime processes: a backtracking engine would stall them on `(a|a)*$`, which a star-height check
 * (safe-regex) does not catch. They run on RE2 (re2-pattern.ts): linear time whatever the pattern; no
 * backreferences or lookaround, so a schema using them does not compile (a 400 when the agent is saved). Issue #35.
 */
const safeRegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    let re: RE2JS;
    try {
      re = compileRe2(pattern);
    } catch (e) {
      throw e instanceof PatternError ? new Error(`a "pattern" is not a valid RE2 pattern: ${e.message}`) : e;
    }
    // Refused before RE2 too, and kept: such a pattern is a mistake in a schema even where it cannot hurt.
    if (!safeRegex.default(pattern))
      throw new Error('a "pattern" may backtrack exponentially (nested repetition); simplify it');
    return re;
  },
  { code: 'safeRegExp' },
);

function describeErrors(errors: ErrorObject[]): string {
  const listed = errors.slice(0, MAX_LISTED_ERRORS).map(describeError);
  const more = errors.length - listed.length;
  const text = listed.join('; ') + (more > 0 ? ` (and ${more} more)` : '');
  return clip(text || 'is invalid', MAX_MESSAGE_CHARS);
}

/** `items.0.name must be string`, with the offending property or allowed values where Ajv gives them. */
function describeError(e: ErrorObject): string {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
  const params = e.params as { additionalProperty?: unknown; allowedValues?: unknown };
  let detail = '';
  if (e.keyword === 'additionalProperties') detail = `: ${JSON.stringify(params.additionalProperty)}`;
  if (e.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    detail = `: ${clip(params.allowedValues.map((v) => JSON.stringify(v)).join(', '), 120)}`;
  }
  return `${path ? `${path} ` : ''}${e.message ?? 'is invalid'}${detail}`;
}

function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
