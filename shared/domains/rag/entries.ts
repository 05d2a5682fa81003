/**
 * Markdown and Q&A documents split into their entries at ingest (issue #33): an FAQ uploaded as one `.md` file is one
 * chunk per heading (or per question), so a lookup answers with that entry's text alone — no headings, no
 * neighbouring entries — and finds it by its heading too (the heading is embedded with the answer).
 */
export interface Entry {
  /** The heading or question, in plain words ("Emergencies", "Do you take walk-ins?"). */
  heading: string;
  /** The entry's text in plain words: Markdown marks, list bullets and link targets removed. */
  answer: string;
  /** Offsets of the entry in the text it was split from. */
  start: number;
  end: number;
}

/** The chunk metadata key naming the entry (heading or question) a chunk of an `entries` document belongs to. */
export const ENTRY_HEADING_KEY = 'entryHeading';

/** At least this many entries make a document an FAQ; fewer and it is chunked by size as before. */
const MIN_ENTRIES = 2;
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$/;
const QUESTION = /^\s*(?:q|question)\s*[:.)-]\s*(.+)$/i;
const ANSWER = /^\s*(?:a|answer)\s*[:.)-]\s*/i;

/** Markdown marks that are not words: emphasis, code ticks, list bullets, block quotes, link targets, tables. */
export function plainMarkdown(s: string): string {
  return s
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/^\s{0,3}(?:[-*+]|\d+[.)])\s+/gm, '')
    .replace(/^\s{0,3}>\s?/gm, '')
    .replace(/[*_`~|]+/g, '')
    .replace(/^\s*-{3,}\s*$/gm, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n{2,}/g, '\n')
    .trim();
}

interface Mark {
  heading: string;
  at: number;
  bodyAt: number;
}

function linesWithOffsets(text: string): { line: string; at: number }[] {
  const out: { line: string; at: number }[] = [];
  let at = 0;
  for (const line of text.split('\n')) {
    out.push({ line, at });
    at += line.length + 1;
  }
  return out;
}

function entriesFrom(text: string, marks: Mark[], answerOf: (body: string) => string): Entry[] {
  const entries: Entry[] = [];
  marks.forEach((m, i) => {
    const end = i + 1 < marks.length ? marks[i + 1]!.at : text.length;
    const answer = plainMarkdown(answerOf(text.slice(m.bodyAt, end)));
    // A title directly above the first heading ("# FAQ" then "## Opening hours") has no text of its own.
    if (answer) entries.push({ heading: plainMarkdown(m.heading), answer, start: m.at, end });
  });
  return entries;
}

/**
 * The entries of a Markdown document (one per heading, any level) or a Q&A document (`Q:`/`Question:` lines, each
 * answered by the lines after it, an `A:` prefix dropped); null when it has fewer than two (plain prose). Fenced
 * code blocks are not searched for headings.
 */
export function splitEntries(text: string): Entry[] | null {
  const lines = linesWithOffsets(text);
  const headings: Mark[] = [];
  const questions: Mark[] = [];
  let fenced = false;
  for (const { line, at } of lines) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const h = HEADING.exec(line);
    if (h) headings.push({ heading: h[2]!, at, bodyAt: at + line.length + 1 });
    const q = QUESTION.exec(line);
    if (q) questions.push({ heading: q[1]!, at, bodyAt: at + line.length + 1 });
  }
  const qa = questions.length >= MIN_ENTRIES ? entriesFrom(text, questions, (b) => b.replace(ANSWER, '')) : [];
  if (qa.length >= MIN_ENTRIES) return qa;
  const md = headings.length >= MIN_ENTRIES ? entriesFrom(text, headings, (b) => b) : [];
  return md.length >= MIN_ENTRIES ? md : null;
}
