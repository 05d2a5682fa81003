import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { ApiError } from '../../kernel/errors/api-error.ts';

/** E.164 form of a phone number typed with its country code ("+1 (415) 555-0100" → "+14155550100"). */
export function normalisePhone(input: string): string {
  const parsed = parsePhoneNumberFromString(input.trim());
  if (!parsed?.isValid()) throw new ApiError('invalid_phone_number', {}, 'phone');
  return parsed.number;
}
