/** pgvector's text form, `[0.1,0.2,…]`, with enough digits for float32. */
export function toVectorLiteral(v: Float32Array | number[]): string {
  let s = '[';
  for (let i = 0; i < v.length; i++) {
    if (i) s += ',';
    const x = v[i]!;
    s += Number.isFinite(x) ? Number(x.toPrecision(7)).toString() : '0';
  }
  return s + ']';
}
