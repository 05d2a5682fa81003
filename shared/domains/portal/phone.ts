import {
  getExampleNumber,
  parsePhoneNumberFromString,
  validatePhoneNumberLength,
  type CountryCode,
} from 'libphonenumber-js';
import examples from 'libphonenumber-js/examples.mobile.json';
import metadata from 'libphonenumber-js/metadata.min.json';
import { ApiError } from '../../kernel/errors/api-error.ts';

const FORMAT = 'Write it in international (E.164) form: "+", the country code, then the number';
const GENERIC_EXAMPLE = '+1 415 555 0100';

/** E.164 form of a phone number typed with its country code ("+1 (415) 555-0100" → "+14155550100"). */
export function normalisePhone(input: string): string {
  const parsed = parsePhoneNumberFromString(input.trim());
  if (!parsed?.isValid()) throw new ApiError('invalid_phone_number', { detail: whatIsWrong(input.trim()) }, 'phone');
  return parsed.number;
}

/**
 * Why a typed number is not a usable E.164 number, and an example of one that is (for its country code when it
 * has one): "+1 555 0100" is too short, "+1 555 555 0100" has no such area code, "4155550100" lacks the "+1".
 */
export function whatIsWrong(input: string): string {
  const parsed = parsePhoneNumberFromString(input);
  const code = parsed?.countryCallingCode;
  const example = (code && exampleFor(code)) ?? GENERIC_EXAMPLE;
  const digits = parsed?.nationalNumber.length ?? 0;
  switch (validatePhoneNumberLength(input)) {
    case 'NOT_A_NUMBER':
      return `"${clip(input)}" is not a phone number. ${FORMAT}, e.g. ${GENERIC_EXAMPLE}.`;
    case 'INVALID_COUNTRY':
      return input.startsWith('+')
        ? `"${clip(input)}" does not start with a country code in use. ${FORMAT}, e.g. ${GENERIC_EXAMPLE}.`
        : `"${clip(input)}" has no country code. ${FORMAT}, e.g. ${GENERIC_EXAMPLE} (US) or +44 20 7946 0958 (UK).`;
    case 'TOO_SHORT':
      return `${clip(input)} is too short for country code +${code}: ${digits} digits follow it. A full number (E.164) looks like ${example}.`;
    case 'TOO_LONG':
      return `${clip(input)} is too long for country code +${code}: ${digits} digits follow it. A full number (E.164) looks like ${example}.`;
    case 'INVALID_LENGTH':
      return `No number with country code +${code} has ${digits} digits after it. A full number (E.164) looks like ${example}.`;
    default:
      return `${clip(input)} has the length of a +${code} number but is not one in use: check the area code and the first digits. A number that works looks like ${example}.`;
  }
}

const clip = (s: string) => (s.length > 40 ? `${s.slice(0, 40)}…` : s);

/** An example number of the main country of a calling code (+1 → US, +44 → GB), in international format. */
function exampleFor(callingCode: string): string | undefined {
  const countries = (metadata as { country_calling_codes: Record<string, string[]> }).country_calling_codes[
    callingCode
  ];
  const main = countries?.[0] as CountryCode | undefined;
  return main ? getExampleNumber(main, examples)?.formatInternational() : undefined;
}
