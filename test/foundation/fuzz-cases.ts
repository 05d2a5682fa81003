/**
 * Generates malformed and boundary requests for one OpenAPI operation: wrong types, missing fields, huge strings,
 * NUL bytes (at any depth), unknown and foreign ids, bad JSON, wrong content types and malformed multipart.
 * Deterministic: every random choice comes from the seeded generator passed in.
 */

export { mulberry32 as seeded } from '../../shared/kernel/prng.ts';

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  default?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  format?: string;
  pattern?: string;
  additionalProperties?: boolean | JsonSchema;
}

export interface Operation {
  method: string;
  path: string;
  params: { name: string; in: 'path' | 'query' | 'header'; schema?: JsonSchema }[];
  jsonBody?: JsonSchema;
  multipart?: JsonSchema;
}

export interface FuzzCase {
  label: string;
  method: string;
  /** Path with parameters filled in and the query string appended, already encoded. */
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Omit the API key (the request must then be 401 in the envelope). */
  anonymous?: boolean;
}

/** A marker that must never come back in an error body (inputs are not echoed). */
export const HUGE = 'Hx9'.repeat(40_000);
const NUL = 'a\u0000b';

function typeOf(s: JsonSchema): string | undefined {
  if (Array.isArray(s.type)) return s.type.find((t) => t !== 'null');
  return s.type;
}

/** A plausible valid value for a schema, so that a mutation of one field is the only thing wrong. */
export function sample(s: JsonSchema, ids: string[], rnd: () => number, depth = 0): unknown {
  if (s.const !== undefined) return s.const;
  if (s.enum?.length) return s.enum[Math.floor(rnd() * s.enum.length)];
  const alt = s.anyOf ?? s.oneOf ?? s.allOf;
  if (alt?.length) return sample(alt.find((a) => typeOf(a) !== 'null') ?? alt[0]!, ids, rnd, depth);
  if (s.default !== undefined && rnd() < 0.5) return s.default;
  switch (typeOf(s)) {
    case 'object': {
      const out: Record<string, unknown> = {};
      if (depth > 4) return out;
      for (const [k, v] of Object.entries(s.properties ?? {})) {
        if (s.required?.includes(k) || rnd() < 0.5) out[k] = sample(v, ids, rnd, depth + 1);
      }
      return out;
    }
    case 'array':
      return depth > 4 || !s.items ? [] : [sample(s.items, ids, rnd, depth + 1)];
    case 'integer':
    case 'number':
      return s.minimum ?? (s.maximum !== undefined ? Math.min(1, s.maximum) : 1);
    case 'boolean':
      return rnd() < 0.5;
    case 'string':
      if (s.format === 'uri' || s.format === 'url') return 'https://example.com/a.wav';
      if (s.format === 'email') return 'a@example.com';
      if (s.format === 'date-time') return '2026-01-01T00:00:00Z';
      if (s.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
      if (rnd() < 0.3) return ids[Math.floor(rnd() * ids.length)];
      return 'x'.repeat(Math.max(1, s.minLength ?? 1));
    default:
      return 'x';
  }
}

/** Replaces every string in a value (at any depth) with `to`. */
function mapStrings(v: unknown, to: string): unknown {
  if (typeof v === 'string') return to;
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, to));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapStrings(x, to)]));
  return v;
}

function wrongType(s: JsonSchema): unknown {
  switch (typeOf(s)) {
    case 'string':
      return 12345;
    case 'integer':
    case 'number':
      return '12';
    case 'boolean':
      return 'yes';
    case 'array':
      return { not: 'an array' };
    case 'object':
      return ['not', 'an', 'object'];
    default:
      return [[{}]];
  }
}

const PATH_VALUES = [
  '%00',
  'id%00x',
  'x'.repeat(3000),
  '%F0%9F%98%80',
  '..%2F..%2Fetc',
  "1'%20or%20'1'%3D'1",
  '%FF%FE',
  '-1',
  '00000000-0000-4000-8000-000000000000',
];
const QUERY_VALUES = ['%00', 'a%00b', HUGE.slice(0, 6000), '-1', '1e309', 'NaN', '%FF', '{}', ''];

const JSON_HEADERS = { 'content-type': 'application/json' };

/** Every case for one operation. `ids` are real ids of another developer plus unknown ones. */
export function casesFor(op: Operation, ids: string[], rnd: () => number): FuzzCase[] {
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const fill = (over: Record<string, string> = {}) =>
    op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (name in over) return over[name]!;
      return encodeURIComponent(ids[Math.floor(rnd() * ids.length)]!);
    });
  const validQuery = () =>
    queryParams
      .filter(() => rnd() < 0.5)
      .map((p) => `${p.name}=${encodeURIComponent(String(sample(p.schema ?? { type: 'string' }, ids, rnd)))}`)
      .join('&');
  const url = (path: string, query = validQuery()) => (query ? `${path}?${query}` : path);
  const out: FuzzCase[] = [];
  const add = (label: string, c: Omit<FuzzCase, 'label' | 'method'>) =>
    out.push({ label: `${op.method} ${op.path} ${label}`, method: op.method, ...c });
  const hasBody = op.method !== 'GET' && op.method !== 'DELETE';

  add('no key', { url: url(fill()), headers: {}, anonymous: true });
  add('bad key', {
    url: url(fill()),
    headers: { authorization: 'Bearer vap_live_' + 'A'.repeat(40) },
    anonymous: true,
  });

  for (const p of pathParams) {
    for (const v of PATH_VALUES)
      add(`path ${p.name}=${v.slice(0, 20)}`, { url: url(fill({ [p.name]: v })), headers: {} });
  }
  for (const q of queryParams) {
    for (const v of QUERY_VALUES)
      add(`query ${q.name}=${v.slice(0, 20)}`, { url: url(fill(), `${q.name}=${v}`), headers: {} });
    add(`query ${q.name} repeated`, { url: url(fill(), `${q.name}=1&${q.name}=2`), headers: {} });
  }
  add('query NUL in unknown param', { url: url(fill(), 'zz=%00'), headers: {} });

  if (!hasBody) return out;
  const schema = op.jsonBody ?? op.multipart ?? { type: 'object', properties: {} };
  const base = () => sample(schema, ids, rnd) as Record<string, unknown>;
  const json = (label: string, body: unknown) =>
    add(label, { url: url(fill()), headers: JSON_HEADERS, body: JSON.stringify(body) });

  json('valid-looking body', base());
  json('empty object', {});
  json('array body', [base()]);
  json('null body', null);
  json('string body', 'hello');
  json('all strings NUL', mapStrings(base(), NUL));
  json('all strings huge', mapStrings(base(), HUGE));
  json('NUL in a key', { ...base(), ['k\u0000']: 1 });
  add('bad JSON', { url: url(fill()), headers: JSON_HEADERS, body: '{"a": ' });
  add('empty JSON', { url: url(fill()), headers: JSON_HEADERS, body: '' });
  add('invalid UTF-8 JSON', {
    url: url(fill()),
    headers: JSON_HEADERS,
    body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
  });
  add('deep JSON', { url: url(fill()), headers: JSON_HEADERS, body: '['.repeat(5000) + ']'.repeat(5000) });
  add('text/plain', { url: url(fill()), headers: { 'content-type': 'text/plain' }, body: 'hello' });
  add('xml', { url: url(fill()), headers: { 'content-type': 'application/xml' }, body: '<a/>' });
  add('form-urlencoded', {
    url: url(fill()),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'a=%00',
  });
  add('over the body limit', {
    url: url(fill()),
    headers: JSON_HEADERS,
    body: `{"a":"${'x'.repeat(4 * 1024 * 1024 + 10)}"}`,
  });

  for (const [k, v] of Object.entries(schema.properties ?? {}).slice(0, 10)) {
    json(`${k}: wrong type`, { ...base(), [k]: wrongType(v) });
    json(`${k}: NUL`, {
      ...base(),
      [k]: typeOf(v) === 'string' || rnd() < 0.5 ? NUL : mapStrings(sample(v, ids, rnd), NUL),
    });
    json(`${k}: huge`, { ...base(), [k]: HUGE });
    json(`${k}: null`, { ...base(), [k]: null });
    json(`${k}: empty`, { ...base(), [k]: typeOf(v) === 'array' ? [] : typeOf(v) === 'object' ? {} : '' });
    json(`${k}: nested huge`, { ...base(), [k]: mapStrings(sample(v, ids, rnd), HUGE) });
    if (typeOf(v) === 'number' || typeOf(v) === 'integer') json(`${k}: out of range`, { ...base(), [k]: 1e308 });
  }
  for (const k of schema.required ?? []) {
    const b = base();
    delete b[k];
    json(`missing ${k}`, b);
  }

  // Multipart, on every route with a body: upload routes must answer 400, others 415 — never 500.
  const b = 'fuzzb0undary';
  add('multipart without boundary', {
    url: url(fill()),
    headers: { 'content-type': 'multipart/form-data' },
    body: 'x',
  });
  add('multipart garbage', {
    url: url(fill()),
    headers: { 'content-type': `multipart/form-data; boundary=${b}` },
    body: 'garbage',
  });
  add('multipart truncated', {
    url: url(fill()),
    headers: { 'content-type': `multipart/form-data; boundary=${b}` },
    body: `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF`,
  });
  add('multipart NUL field', {
    url: url(fill()),
    headers: { 'content-type': `multipart/form-data; boundary=${b}` },
    body: `--${b}\r\nContent-Disposition: form-data; name="model"\r\n\r\na\u0000b\r\n--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nnot audio\r\n--${b}--\r\n`,
  });
  add('multipart no file', {
    url: url(fill()),
    headers: { 'content-type': `multipart/form-data; boundary=${b}` },
    body: `--${b}\r\nContent-Disposition: form-data; name="language"\r\n\r\nen\r\n--${b}--\r\n`,
  });
  return out;
}
