import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';

/**
 * Readable text from an HTML page, without a DOM. htmlparser2's tokenizer reads the markup as the HTML spec's does
 * (raw-text script/style/title/textarea, comments, quoted attribute values holding `>`, the full entity table);
 * the small tree builder below keeps the open-element stack and decides what is text:
 * - script, style, noscript, template, svg, nav, header, footer, aside, form, iframe and comments are dropped, and
 *   so is the head, except its first <title>, which becomes `title`;
 * - the text of the page's <main> is preferred when it has any, else that of its <article> elements, else the page;
 * - headings, paragraphs, list items, table rows and other blocks become paragraph breaks, <br> a line break, table
 *   cells are separated by a space; other whitespace collapses as a browser renders it (kept inside <pre>);
 * - a raw-text element that is never closed (a <script> with no </script> after it) would, by the spec, swallow the
 *   rest of the page. Here its content ends at the next tag and what follows is read as ordinary markup, so a broken
 *   or truncated page keeps its text; the code up to that tag is dropped. (An unclosed `<!--` still hides the rest of
 *   the page, as in browsers: there is no tag inside a comment to end it at.)
 * Linear in the input: one regex pass for raw-text end tags, one tokenizer pass, and a stack whose pops are paid for
 * by its pushes. htmlparser2's own Parser is not used because its stack is an array it unshifts and searches with
 * indexOf on every end tag: seconds per megabyte of deeply nested hostile markup.
 */
export interface ExtractedPage {
  title: string | null;
  text: string;
}

const DROP = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'nav',
  'header',
  'footer',
  'aside',
  'form',
  'iframe',
]);
/** Laid out as blocks by browsers: their boundaries are paragraph breaks (dropped ones' too). */
const BLOCK = new Set([
  ...['p', 'div', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'li', 'ul', 'ol', 'dl', 'dt', 'dd', 'tr', 'table', 'section'],
  ...['article', 'main', 'blockquote', 'pre', 'figure', 'figcaption', 'hr', 'address', 'caption', 'details'],
  ...['summary', 'nav', 'header', 'footer', 'aside', 'form'],
]);
/** Elements that never have content: their start tag is the whole element (htmlparser2's list). */
const VOID = new Set([
  ...['area', 'base', 'basefont', 'br', 'col', 'command', 'embed', 'frame', 'hr', 'img', 'input', 'isindex'],
  ...['keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr'],
]);
/** What may sit in <head>; any other start tag, or visible text, ends an unclosed head as the spec's parser does. */
const HEAD_CONTENT = new Set(['base', 'link', 'meta', 'noscript', 'script', 'style', 'template', 'title']);
/** SVG and MathML honour `<x/>`; in HTML the slash is ignored (`<div/>` opens a div). */
const FOREIGN = new Set(['svg', 'math']);
const HTML_SPACE = /[\t\n\f\r ]+/g;
const ONLY_HTML_SPACE = /^[\t\n\f\r ]*$/;
/** The end tags that close raw text, as htmlparser2's tokenizer matches them: case-insensitive, then `>` or space. */
const RAW_TEXT_CLOSE = /<\/(script|style|title|textarea|xmp)[\t\n\f\r >]/gi;

type RawText = 'script' | 'style' | 'title' | 'textarea' | 'xmp';

/**
 * Which end tag htmlparser2's tokenizer waits for after this start tag, or null when it reads on as markup. It tells
 * the names apart by their first two letters and then checks the rest of the end sequence, so `<tmp>` waits for
 * `</xmp` there; this mirrors it exactly, because deciding "unclosed" for a different set would let raw text run on.
 */
function rawTextEnd(name: string): RawText | null {
  const rest = name.slice(1);
  if (name[0] === 's') return rest === 'cript' ? 'script' : rest === 'tyle' ? 'style' : null;
  if (name[0] !== 't' && name[0] !== 'x') return null;
  return rest === 'itle' ? 'title' : rest === 'extarea' ? 'textarea' : rest === 'mp' ? 'xmp' : null;
}

export function extractReadableText(html: string): ExtractedPage {
  // Where each raw-text end tag last occurs: a start tag after it can never be closed.
  const lastClose = new Map<string, number>();
  for (const m of html.matchAll(RAW_TEXT_CLOSE)) lastClose.set(m[1]!.toLowerCase(), m.index);

  const page = new PageBuilder();
  // One tokenizer per run of input; a new run starts after each unclosed raw-text start tag (see onopentagend).
  let chunk = html;
  let base = 0;
  let restartAt = -1;
  let tagName = '';
  let tokenizer: Tokenizer;
  const noop = (): void => {};
  const callbacks: TokenizerCallbacks = {
    ontext: (start, end) => page.text(chunk.slice(start, end)),
    ontextentity: (codePoint) => page.text(String.fromCodePoint(codePoint)),
    onopentagname: (start, end) => {
      tagName = chunk.slice(start, end).toLowerCase();
    },
    onopentagend: (end) => {
      page.open(tagName, false);
      const raw = rawTextEnd(tagName);
      if (raw && (lastClose.get(raw) ?? -1) <= base + end) {
        // The tokenizer is about to read everything left as this element's raw text. Stop it, let the element end
        // at the next tag, and read on from just after the start tag with a fresh tokenizer in its text state.
        page.endAtNextTag(tagName);
        restartAt = base + end + 1;
        tokenizer.pause();
      }
    },
    onselfclosingtag: () => page.open(tagName, true),
    onclosetag: (start, end) => page.close(chunk.slice(start, end).toLowerCase()),
    oncomment: () => page.markup(),
    oncdata: () => page.markup(),
    ondeclaration: () => page.markup(),
    onprocessinginstruction: () => page.markup(),
    onattribname: noop,
    onattribdata: noop,
    onattribentity: noop,
    onattribend: noop,
    onend: noop,
  };
  for (;;) {
    tokenizer = new Tokenizer({ decodeEntities: true }, callbacks);
    tokenizer.write(chunk);
    if (restartAt < 0) {
      tokenizer.end();
      break;
    }
    // A slice of a flat string is O(1) in V8, so 50,000 restarts on a megabyte stay linear.
    base = restartAt;
    chunk = html.slice(base);
    restartAt = -1;
  }
  return page.result();
}

/** The open-element stack and the text it lets through, fed one token at a time. */
class PageBuilder {
  private readonly stack: string[] = [];
  /** Open elements by name, so an end tag for something not open is ignored without searching the stack. */
  private readonly openCount = new Map<string, number>();
  private dropDepth = 0;
  private mainDepth = 0;
  private articleDepth = 0;
  private preDepth = 0;
  private foreignDepth = 0;
  private titleDepth = 0;
  private titleState: 'before' | 'in' | 'done' = 'before';
  private endsAtNextTag: string | null = null;
  private readonly titleParts: string[] = [];
  private readonly pageParts: string[] = [];
  private readonly mainParts: string[] = [];
  private readonly articleParts: string[] = [];

  open(name: string, selfClosing: boolean): void {
    this.markup();
    if (this.stack.at(-1) === 'head' && !HEAD_CONTENT.has(name)) this.closeTo('head');
    // A self-closed raw-text tag (`<script/>`) is one the tokenizer did not read raw text for, so it is empty too.
    if (VOID.has(name) || (selfClosing && (this.foreignDepth > 0 || FOREIGN.has(name) || rawTextEnd(name)))) {
      this.enter(name);
      this.leave(name);
      return;
    }
    this.stack.push(name);
    this.openCount.set(name, (this.openCount.get(name) ?? 0) + 1);
    this.enter(name);
  }

  close(name: string): void {
    this.markup();
    if (VOID.has(name)) {
      if (name === 'br') this.enter('br'); // browsers read </br> as <br>
      return;
    }
    if ((this.openCount.get(name) ?? 0) > 0) this.closeTo(name);
    else if (name === 'p') this.separate('\n\n'); // a stray </p> is an empty paragraph
  }

  /** The current element, an unclosed raw-text one, ends at the next tag, comment or declaration. */
  endAtNextTag(name: string): void {
    this.endsAtNextTag = name;
  }

  /** Any markup token ends an unclosed raw-text element's content. */
  markup(): void {
    if (this.endsAtNextTag === null) return;
    const name = this.endsAtNextTag;
    this.endsAtNextTag = null;
    this.closeTo(name);
  }

  text(s: string): void {
    if (this.titleDepth > 0) {
      if (this.titleState === 'in') this.titleParts.push(s);
      return;
    }
    if (this.dropDepth > 0) return;
    if (this.stack.at(-1) === 'head') {
      if (ONLY_HTML_SPACE.test(s)) return;
      this.closeTo('head');
    }
    this.emit(this.preDepth > 0 ? s : s.replace(HTML_SPACE, ' '));
  }

  result(): ExtractedPage {
    const title = collapse(this.titleParts.join('').replace(HTML_SPACE, ' ')) || null;
    const text = paragraphs(this.mainParts) || paragraphs(this.articleParts) || paragraphs(this.pageParts);
    return { title, text };
  }

  private closeTo(name: string): void {
    for (;;) {
      const top = this.stack.pop();
      if (top === undefined) return;
      this.openCount.set(top, this.openCount.get(top)! - 1);
      this.leave(top);
      if (top === name) return;
    }
  }

  // Order matters: a block's breaks belong inside the <main>/<article> it opens or closes (so two articles stay two
  // paragraphs), and outside the dropped element it opens or closes (so a <nav> between two words still parts them).
  private enter(name: string): void {
    if (name === 'main') this.mainDepth++;
    if (name === 'article') this.articleDepth++;
    if (name === 'br') this.separate('\n');
    else if (BLOCK.has(name)) this.separate('\n\n');
    if (DROP.has(name)) this.dropDepth++;
    if (FOREIGN.has(name)) this.foreignDepth++;
    if (name === 'pre') this.preDepth++;
    if (name === 'title') {
      this.titleDepth++;
      // The page's title is the first one outside dropped elements (an <svg> holds titles of its own).
      if (this.titleState === 'before' && this.dropDepth === 0) this.titleState = 'in';
    }
  }

  private leave(name: string): void {
    if (DROP.has(name)) this.dropDepth--;
    if (FOREIGN.has(name)) this.foreignDepth--;
    if (name === 'pre') this.preDepth--;
    if (name === 'title') {
      this.titleDepth--;
      if (this.titleState === 'in') this.titleState = 'done';
    }
    if (BLOCK.has(name)) this.separate('\n\n');
    else if (name === 'td' || name === 'th') this.separate(' ');
    if (name === 'main') this.mainDepth--;
    if (name === 'article') this.articleDepth--;
  }

  private separate(s: string): void {
    if (this.dropDepth === 0 && this.titleDepth === 0) this.emit(s);
  }

  private emit(s: string): void {
    this.pageParts.push(s);
    if (this.mainDepth > 0) this.mainParts.push(s);
    if (this.articleDepth > 0) this.articleParts.push(s);
  }
}

/** Lines collapsed and trimmed; blank lines separate paragraphs, which are joined by one blank line. */
function paragraphs(parts: string[]): string {
  const out: string[] = [];
  let lines: string[] = [];
  for (const raw of parts.join('').split('\n')) {
    const line = collapse(raw);
    if (line) lines.push(line);
    else if (lines.length > 0) {
      out.push(lines.join('\n'));
      lines = [];
    }
  }
  if (lines.length > 0) out.push(lines.join('\n'));
  return out.join('\n\n');
}

function collapse(s: string): string {
  return s.replace(/[ \t\f\v\u00a0]+/g, ' ').trim();
}
