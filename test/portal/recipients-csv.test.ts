import { describe, expect, it } from 'vitest';
import { csvRows, parseRecipients } from '../../portal/src/recipients-csv.ts';

/** The campaign form's CSV check: every row's mistake listed with its line before anything is sent. */
describe('recipients CSV', () => {
  it('reads quoted fields with commas, quotes and line breaks, and CRLF files', () => {
    const rows = csvRows('phone,note\r\n+14155550100,"a, ""b""\nc"\r\n\r\n+14155550101,x\r\n');
    expect(rows).toEqual([
      { line: 1, cells: ['phone', 'note'] },
      { line: 2, cells: ['+14155550100', 'a, "b"\nc'] },
      { line: 5, cells: ['+14155550101', 'x'] },
    ]);
  });

  it('takes phone, time zone and variable columns, normalising written phone numbers', () => {
    const r = parseRecipients(
      'Phone,first_name,timeZone\n+1 (415) 555-0100,Ada,America/Los_Angeles\n+442071838750,Grace,\n',
    );
    expect(r.errors).toEqual([]);
    expect(r.variables).toEqual(['first_name']);
    expect(r.recipients).toEqual([
      { phone: '+14155550100', variables: { first_name: 'Ada' }, timeZone: 'America/Los_Angeles' },
      { phone: '+442071838750', variables: { first_name: 'Grace' } },
    ]);
    expect(r.lines).toEqual([2, 3]);
  });

  it('lists every bad row with its line: phone, duplicate, time zone, too many fields, bad column names', () => {
    const r = parseRecipients(
      'phone,first name,tz\n4155550100,A,UTC\n+14155550100,B,Mars/Olympus\n+14155550101,C,UTC\n+14155550101,D,UTC\n+14155550102,E,UTC,extra\n',
    );
    expect(r.errors.map((e) => e.line)).toEqual([1, 2, 3, 5, 6]);
    expect(r.errors[0]!.message).toMatch(/first name/);
    expect(r.errors[1]!.message).toMatch(/E\.164/);
    expect(r.errors[2]!.message).toMatch(/time zone/);
    expect(r.errors[3]!.message).toMatch(/already on line 4/);
    expect(r.recipients.map((x) => x.phone)).toEqual(['+14155550101']);
  });

  it('refuses a file without a phone column or without rows', () => {
    expect(parseRecipients('name\nAda\n').errors[0]!.message).toMatch(/no "phone" column/);
    expect(parseRecipients('phone\n').errors[0]!.message).toMatch(/no recipients/);
    expect(parseRecipients('').errors[0]!.message).toMatch(/empty/);
  });
});
