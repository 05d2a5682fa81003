/**
 * Readable text from an HTML page, without a DOM: drops script, style, nav, header, footer, aside, form,
 * noscript, svg, template and comments; prefers the page's <main> or <article> when it has one; turns headings,
 * paragraphs, list items, table rows and line breaks into paragraph or line breaks; decodes entities.
 */
export interface ExtractedPage {
  title: string | null;
  text: string;
}

const DROP = ['script', 'style', 'noscript', 'template', 'svg', 'nav', 'header', 'footer', 'aside', 'form', 'iframe'];
const BLOCK =
  /<\/?(?:p|div|h[1-6]|li|ul|ol|dl|dt|dd|tr|table|section|article|main|blockquote|pre|figure|figcaption|hr)\b[^>]*>/gi;

export function extractReadableText(html: string): ExtractedPage {
  let h = html.replace(/<!--[\s\S]*?-->/g, ' ');
  const titleMatch = /<title\b[^>]*>([\s\S]*?)<\/title>/i.exec(h);
  const title = titleMatch ? collapse(decodeEntities(titleMatch[1]!.replace(/<[^>]*>/g, ''))) || null : null;
  h = h.replace(/<head\b[\s\S]*?<\/head>/gi, ' ');
  for (const tag of DROP) h = h.replace(new RegExp(`<${tag}\\b[\\s\\S]*?</${tag}\\s*>`, 'gi'), ' ');
  const main = /<(main|article)\b[^>]*>([\s\S]*)<\/\1\s*>/i.exec(h);
  if (main && main[2]!.replace(/<[^>]*>/g, '').trim().length > 0) h = main[2]!;
  const text = decodeEntities(
    h
      .replace(/<br\s*\/?>/gi, '\n')
      .replace(/<\/t[dh]\s*>/gi, ' \t')
      .replace(BLOCK, '\n\n')
      .replace(/<[^>]*>/g, ''),
  );
  const paragraphs = text
    .split(/\n\s*\n/)
    .map((p) => p.split('\n').map(collapse).filter(Boolean).join('\n'))
    .filter(Boolean);
  return { title, text: paragraphs.join('\n\n') };
}

function collapse(s: string): string {
  return s.replace(/[ \t\f\v\u00a0]+/g, ' ').trim();
}

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  ndash: '–',
  mdash: '—',
  hellip: '…',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  copy: '©',
  reg: '®',
  trade: '™',
  deg: '°',
  eacute: 'é',
  egrave: 'è',
  aacute: 'á',
  ouml: 'ö',
  uuml: 'ü',
  auml: 'ä',
  szlig: 'ß',
  middot: '·',
  bull: '•',
  euro: '€',
  pound: '£',
  times: '×',
};

export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+\d*);/gi, (whole, ent: string) => {
    if (ent[0] === '#') {
      const code = ent[1] === 'x' || ent[1] === 'X' ? parseInt(ent.slice(2), 16) : parseInt(ent.slice(1), 10);
      return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : ' ';
    }
    return NAMED[ent.toLowerCase()] ?? whole;
  });
}
