import type { ExtractedFacts } from '../../../contracts/call-analysis.ts';
import { spokenPhoneNumbers } from '../../../kernel/spoken-phone.ts';

/** What the rule-based extractor is, in words: stored with its result and shown on the call page. */
export const RULES_LABEL =
  'Rule-based extractor (local; finds phone numbers, names after "my name is", dates and times and callback ' +
  "requests in the caller's words; not a language model: no summary, structured data or success verdict)";

/** Words that end a name ("my name is Dana and I…", "this is Dana from…"). */
const NOT_NAME = new Set(
  (
    "and or but from at with calling here speaking i im i'm my the a an to about because so please this that " +
    'is was just again also calling, regarding for on in of'
  ).split(' '),
);

const WEEKDAY = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
const MONTH =
  '(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)';
const NUMBER_WORD = '(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)';
const DATE_TIME = new RegExp(
  [
    `\\b(?:(?:this|next|on)\\s+)?${WEEKDAY}(?:\\s+(?:morning|afternoon|evening|night))?\\b`,
    '\\b(?:today|tomorrow|tonight|tomorrow (?:morning|afternoon|evening))\\b',
    `\\b${MONTH}\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?\\b`,
    `\\b\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\b`,
    '\\b\\d{4}-\\d{2}-\\d{2}\\b',
    '\\b\\d{1,2}/\\d{1,2}(?:/\\d{2,4})?\\b',
    `\\b(?:\\d{1,2}(?::\\d{2})?|${NUMBER_WORD})\\s*(?:a\\.?m\\.?|p\\.?m\\.?|o'?clock)(?=\\W|$)`,
    '\\b\\d{1,2}:\\d{2}\\b',
    '\\b(?:noon|midday|midnight)\\b',
  ].join('|'),
  'gi',
);
const CALLBACK =
  /\b(?:call(?:s|ing)?\s+(?:me|us|him|her|them)\s+back|call\s+back|callback|return\s+(?:my|the|our)\s+call|give\s+(?:me|us)\s+a\s+(?:call|ring)|ring\s+(?:me|us)\s+back|get\s+back\s+to\s+(?:me|us))\b/i;
const NAME_INTRO =
  /\b(?:my name is|my name's|this is|i am|i'm|it's)\s+([A-Za-z][A-Za-z'-]*(?:\s+[A-Za-z][A-Za-z'-]*){0,2})/gi;

function names(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(NAME_INTRO)) {
    const words: string[] = [];
    for (const w of m[1]!.split(/\s+/)) {
      if (NOT_NAME.has(w.toLowerCase())) break;
      words.push(w);
    }
    // "it's" and "I am" lead to names only when what follows is capitalised ("I'm fine" is no name).
    const strict = !/^my name/i.test(m[0]);
    const kept = strict ? words.filter((w, i) => i === 0 || /^[A-Z]/.test(w)) : words;
    if (!kept.length || (strict && !/^[A-Z]/.test(kept[0]!))) continue;
    const name = kept.map((w) => w[0]!.toUpperCase() + w.slice(1)).join(' ');
    if (!found.includes(name)) found.push(name);
  }
  return found;
}

function dateTimes(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(DATE_TIME)) {
    // A sentence's full stop after "3 pm" is not part of the time ("3 p.m." keeps its own).
    const v = m[0]
      .trim()
      .replace(/\s+/g, ' ')
      .replace(/(?<![ap]\.m)\.$/i, '');
    if (!found.some((f) => f.toLowerCase() === v.toLowerCase())) found.push(v);
  }
  return found;
}

/**
 * The local engine's post-call analysis: what rules can find in what the caller said. Each list keeps the order
 * things were said in and holds each value once.
 */
export function extractFacts(callerUtterances: string[]): ExtractedFacts {
  const text = callerUtterances.join('\n').slice(0, 100_000);
  return {
    phoneNumbers: spokenPhoneNumbers(text),
    names: names(text),
    dateTimes: dateTimes(text),
    callbackRequested: CALLBACK.test(text),
  };
}
