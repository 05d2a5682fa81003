/**
 * A campaign's recipients from a CSV file, checked row by row before anything is sent (and so before anything is
 * dialled): a `phone` column (E.164), an optional time-zone column (`timeZone`, `time_zone`, `timezone` or `tz`:
 * an IANA name), and every other column a template variable of that name (`{{first_name}}`). The API checks the
 * same again; this is so that a file's mistakes are listed at once, with their row numbers, instead of one 400 at
 * a time.
 */
export interface CsvRecipient {
  phone: string;
  variables: Record<string, string>;
  timeZone?: string;
}
export interface RowError {
  /** The line of the file (1 = the header). */
  line: number;
  message: string;
}
export interface ParsedRecipients {
  recipients: CsvRecipient[];
  /** The file line of each recipient (an API error about `recipients.N` names it). */
  lines: number[];
  errors: RowError[];
  /** The variable columns found. */
  variables: string[];
}

export const MAX_RECIPIENTS = 5000;
const PHONE = /^\+[1-9]\d{6,14}$/;
const VARIABLE = /^[A-Za-z0-9_.-]{1,64}$/;
const TZ_COLUMNS = new Set(['timezone', 'time_zone', 'tz']);

/** RFC 4180 rows: quoted fields may hold commas, quotes ("") and line breaks. Each row with its first line. */
export function csvRows(text: string): Array<{ line: number; cells: string[] }> {
  const rows: Array<{ line: number; cells: string[] }> = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  const endRow = () => {
    cells.push(cell);
    if (cells.some((c) => c.trim() !== '')) rows.push({ line: rowLine, cells });
    cells = [];
    cell = '';
  };
  const s = text.replace(/^\uFEFF/, '');
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (quoted) {
      if (ch === '"' && s[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else {
        if (ch === '\n') line++;
        cell += ch;
      }
    } else if (ch === '"' && cell.trim() === '') {
      quoted = true;
      cell = '';
    } else if (ch === ',') {
      cells.push(cell);
      cell = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && s[i + 1] === '\n') i++;
      endRow();
      line++;
      rowLine = line;
    } else cell += ch;
  }
  endRow();
  return rows;
}

function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** A phone as people write it ("+1 (415) 555-0100") → E.164 ("+14155550100"); anything else is left as it is. */
const normalisePhone = (p: string) => (/^\+[\d\s().-]+$/.test(p.trim()) ? p.replace(/[\s().-]/g, '') : p.trim());

export function parseRecipients(text: string): ParsedRecipients {
  const rows = csvRows(text);
  const errors: RowError[] = [];
  const header = rows.shift();
  if (!header)
    return { recipients: [], lines: [], errors: [{ line: 1, message: 'The file is empty.' }], variables: [] };
  const names = header.cells.map((c) => c.trim());
  const phoneAt = names.findIndex((n) => n.toLowerCase() === 'phone');
  if (phoneAt < 0)
    return {
      recipients: [],
      lines: [],
      errors: [{ line: 1, message: 'The header has no "phone" column.' }],
      variables: [],
    };
  const tzAt = names.findIndex((n) => TZ_COLUMNS.has(n.toLowerCase()));
  const vars = names.map((n, i) => ({ n, i })).filter(({ i }) => i !== phoneAt && i !== tzAt && names[i] !== '');
  for (const { n } of vars)
    if (!VARIABLE.test(n))
      errors.push({ line: 1, message: `Column "${n}": a variable name is 1-64 letters, digits, "_", "." or "-".` });
  const recipients: CsvRecipient[] = [];
  const lines: number[] = [];
  const seen = new Map<string, number>();
  for (const r of rows) {
    if (r.cells.length > names.length) {
      errors.push({ line: r.line, message: `${r.cells.length} fields, the header has ${names.length}.` });
      continue;
    }
    const phone = normalisePhone(r.cells[phoneAt] ?? '');
    const problems: string[] = [];
    if (!PHONE.test(phone)) problems.push(`"${phone}" is not a phone number in E.164 form (e.g. +14155550123)`);
    else if (seen.has(phone)) problems.push(`${phone} is already on line ${seen.get(phone)}`);
    const tz = tzAt >= 0 ? (r.cells[tzAt] ?? '').trim() : '';
    if (tz && !validTimeZone(tz)) problems.push(`"${tz}" is not a time zone (e.g. America/New_York)`);
    const variables: Record<string, string> = {};
    for (const { n, i } of vars) {
      const v = (r.cells[i] ?? '').trim();
      if (v.length > 2000) problems.push(`${n} is longer than 2000 characters`);
      if (v) variables[n] = v;
    }
    if (problems.length) {
      errors.push({ line: r.line, message: problems.join('; ') + '.' });
      continue;
    }
    seen.set(phone, r.line);
    recipients.push({ phone, variables, ...(tz ? { timeZone: tz } : {}) });
    lines.push(r.line);
  }
  if (recipients.length + errors.length === 0) errors.push({ line: 2, message: 'The file has no recipients.' });
  if (recipients.length > MAX_RECIPIENTS)
    errors.push({ line: 1, message: `${recipients.length} recipients: a campaign holds at most ${MAX_RECIPIENTS}.` });
  return { recipients, lines, errors, variables: vars.map((v) => v.n) };
}
