/**
 * `{[key]: value}` when the value is set, `{}` when it is null or undefined. The contract types these fields as
 * strings: a string, or absent when not set, never null (a generated client rejects null for a string; see the
 * OpenAPI document's description). Fields the contract types as "string or null" keep null and do not use this.
 */
export function ifSet<K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } {
  return (value === null || value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** An optional Date as the contract's ISO-8601 timestamp field, absent when not set. */
export function ifDate<K extends string>(key: K, value: Date | null | undefined): { [P in K]?: string } {
  return ifSet(key, value?.toISOString());
}
