/**
 * The API's validation messages are written for programs ("temperature: Too big: expected number to be <=2");
 * a form shows them for people ("Temperature must be between 0 and 2"), using the field's label and the bounds
 * the form already knows. Messages that are already sentences (the API's own, e.g. the phone number's) pass
 * through unchanged.
 */

export interface Bounds {
  min?: number | string;
  max?: number | string;
}

const num = (v: number | string | undefined) => (v === undefined || v === '' ? undefined : Number(v));

/** Zod's English messages, as fastify-type-provider-zod passes them on. */
const TOO = /^Too (big|small): expected (number|string|array|bigint|int) to (?:be|have) ([<>]=?)\s*([-\d.e+]+)/i;
const TYPE = /^Invalid input: expected (\w+), received (\w+)/i;
const OPTION = /^Invalid option: expected one of (.+)$/i;
const FORMAT = /^Invalid (string|url|email|uuid|format)/i;

export function humanError(message: string, label: string, bounds: Bounds = {}): string {
  // "temperature: Too big…" → "Too big…" (the field is named by its label instead).
  const raw = message.replace(/^[\w.[\]]+: /, '');
  const min = num(bounds.min);
  const max = num(bounds.max);
  const between = min !== undefined && max !== undefined ? `${label} must be between ${min} and ${max}` : null;
  let m: RegExpExecArray | null;
  if ((m = TOO.exec(raw))) {
    const [, dir, kind, op, value] = m;
    const n = Number(value);
    if (kind === 'string') {
      if (dir!.toLowerCase() === 'small')
        return n <= 1 ? `${label} is required` : `${label} needs at least ${n} characters`;
      return `${label} can be at most ${n} characters long`;
    }
    if (kind === 'array')
      return dir!.toLowerCase() === 'big'
        ? `${label} can hold at most ${n} items`
        : `${label} needs at least ${n} items`;
    if (between) return between;
    if (dir!.toLowerCase() === 'big')
      return op === '<' ? `${label} must be less than ${n}` : `${label} must be at most ${n}`;
    return op === '>' ? `${label} must be more than ${n}` : `${label} must be at least ${n}`;
  }
  if (/expected int, received number/i.test(raw)) return `${label} must be a whole number`;
  if ((m = TYPE.exec(raw))) {
    const [, expected, received] = m;
    if (received === 'undefined') return `${label} is required`;
    if (expected === 'number' || expected === 'int')
      return between ? `${label} must be a number from ${min} to ${max}` : `${label} must be a number`;
    if (expected === 'boolean') return `${label} must be yes or no`;
    if (expected === 'string') return `${label} must be text`;
    return `${label} has the wrong kind of value`;
  }
  if ((m = OPTION.exec(raw))) {
    const choices = m[1]!.split('|').map((c) => c.replace(/^"|"$/g, ''));
    return `${label} must be one of: ${choices.join(', ')}`;
  }
  if (FORMAT.test(raw)) return `${label} is not in a valid format`;
  if (/^Unrecognized key/i.test(raw)) return `${label} is not a field this form can set`;
  // Already a sentence for people: make sure it starts with a capital.
  return raw.charAt(0).toUpperCase() + raw.slice(1);
}
