import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue 23, widened in issue 34: a response field is its value or absent, never null (the contract's convention:
 * "expiresAt absent when no expiry"), because a client generated from the OpenAPI document rejects null for a
 * string, a number or an object. This walks every response schema of the served document and lists the fields of
 * any value type that may be null. The exceptions are the fields the contract itself types "or null" (Agent
 * `ttsModel`, `collectionId`, `styleProfile`) and the areas listed below with their reason; anything else
 * nullable fails here.
 */
const CONTRACT_OR_NULL = new Set(['ttsModel', 'collectionId', 'styleProfile']);
/**
 * Extensions that still answer null (path prefix → fields), each to be moved to "absent" with its area's tests;
 * listed so that no new nullable field slips in beside them. Campaign and spending-cap fields are in areas being
 * reworked in parallel (issue 34's campaign and caps pages); a PUT of spending caps takes null to clear a cap.
 */
const NOT_YET: [RegExp, string[]][] = [
  [/^\/v1\/campaigns/, ['maxDurationSeconds', 'maxCredits']],
  [/^\/v1\/billing\/spending-caps$/, ['dailyCredits']],
  [/^\/v1\/agent-tests\/runs\//, ['latencyMs', 'costCredits', 'turn']],
  [/^\/v1\/observability\/sessions\/interruption-quality$/, ['avg', 'p50', 'p95']],
];

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
});
afterAll(() => p?.close());

type Schema = {
  type?: string | string[];
  nullable?: boolean;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  additionalProperties?: Schema | boolean;
  $ref?: string;
};

const VALUE_TYPES = ['string', 'number', 'integer', 'object', 'array', 'boolean'];

/** A schema that admits null beside a value (string, number, object…): `type: [x, 'null']`, nullable, anyOf. */
function isNullableValue(s: Schema): boolean {
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  const hasValue = (t: Schema) =>
    (Array.isArray(t.type) ? t.type : t.type ? [t.type] : []).some((x) => VALUE_TYPES.includes(x)) ||
    t.properties !== undefined ||
    t.$ref !== undefined;
  if (types.some((t) => VALUE_TYPES.includes(t)) && (types.includes('null') || s.nullable)) return true;
  const alts = s.anyOf ?? s.oneOf;
  if (alts) {
    const hasNull = alts.some((a) => a.type === 'null' || (a as { enum?: unknown[] }).enum?.includes(null));
    return hasNull && alts.some(hasValue);
  }
  return false;
}

function walk(s: Schema | undefined, path: string, out: string[], seen = new Set<Schema>()): void {
  if (!s || typeof s !== 'object' || seen.has(s)) return;
  seen.add(s);
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    if (isNullableValue(prop)) out.push(`${path}.${name}`);
    walk(prop, `${path}.${name}`, out, seen);
  }
  walk(s.items, `${path}[]`, out, seen);
  for (const alt of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) walk(alt, path, out, seen);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') {
    walk(s.additionalProperties, `${path}{}`, out, seen);
  }
}

describe('OpenAPI: fields are values or absent', () => {
  it('no response field (string, number, object, array) may be null, except where the contract says "or null"', async () => {
    const doc = (await (await p.request('/openapi.json')).json()) as {
      info: { description: string };
      paths: Record<
        string,
        Record<string, { responses?: Record<string, { content?: Record<string, { schema: Schema }> }> }>
      >;
    };
    expect(doc.info.description).toMatch(/strings or absent, never null/);
    const found: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, res] of Object.entries(op.responses ?? {})) {
          for (const media of Object.values(res.content ?? {})) {
            walk(media.schema, `${method.toUpperCase()} ${path} ${status}`, found);
          }
        }
      }
    }
    const field = (f: string) =>
      f
        .split(/[.[\]{}]+/)
        .filter(Boolean)
        .at(-1)!;
    const pending = (f: string) =>
      NOT_YET.some(([path, fields]) => path.test(f.split(' ')[1]!) && fields.includes(field(f)));
    const unexpected = found.filter((f) => !CONTRACT_OR_NULL.has(field(f)) && !pending(f));
    expect(unexpected).toEqual([]);
  });
});
