import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue 23 (the contract's last deviations): a field the contract types as a string is a string or absent, never
 * null, because a client generated from the OpenAPI document rejects null for a string. This walks every response
 * schema of the served document and lists the string fields that may be null. The exceptions are the fields the
 * contract itself types "string or null" (Agent `ttsModel`, `collectionId`) and the areas outside the contract
 * listed below with their reason; anything else nullable fails here.
 */
const CONTRACT_STRING_OR_NULL = new Set(['ttsModel', 'collectionId']);
/**
 * Extensions outside ../shared/spec/API.md that still answer null (path prefix → fields), each to be moved to
 * "absent" with its area's tests; listed so that no new nullable string slips in beside them.
 */
const NOT_YET: [RegExp, string[]][] = [];

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

function isNullableString(s: Schema): boolean {
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.includes('string') && (types.includes('null') || s.nullable)) return true;
  const alts = s.anyOf ?? s.oneOf;
  if (alts) {
    const hasNull = alts.some((a) => a.type === 'null' || (a as { enum?: unknown[] }).enum?.includes(null));
    const hasString = alts.some((a) => a.type === 'string' || (Array.isArray(a.type) && a.type.includes('string')));
    return hasNull && hasString;
  }
  return false;
}

function walk(s: Schema | undefined, path: string, out: string[], seen = new Set<Schema>()): void {
  if (!s || typeof s !== 'object' || seen.has(s)) return;
  seen.add(s);
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    if (isNullableString(prop)) out.push(`${path}.${name}`);
    walk(prop, `${path}.${name}`, out, seen);
  }
  walk(s.items, `${path}[]`, out, seen);
  for (const alt of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) walk(alt, path, out, seen);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') {
    walk(s.additionalProperties, `${path}{}`, out, seen);
  }
}

describe('OpenAPI: strings are strings or absent', () => {
  it('no response field typed as a string may be null, except where the contract says "string or null"', async () => {
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
    const unexpected = found.filter((f) => !CONTRACT_STRING_OR_NULL.has(field(f)) && !pending(f));
    expect(unexpected).toEqual([]);
  });
});
