import { describe, expect, it } from 'vitest';
import { chunkText, normalizeText } from '../../shared/domains/rag/chunker.ts';
import { extractReadableText } from '../../shared/domains/rag/html-text.ts';

const sentence = (i: number) => `Sentence number ${i} talks about topic ${i % 7} in some detail.`;
const paragraph = (from: number, n: number) => Array.from({ length: n }, (_, k) => sentence(from + k)).join(' ');

/** Every chunk is a slice of the text at its offsets, within size, and the chunks cover every word. */
function checkInvariants(text: string, size: number, overlap: number) {
  const norm = normalizeText(text);
  const chunks = chunkText(text, { chunkSize: size, chunkOverlap: overlap });
  chunks.forEach((c, i) => {
    expect(c.index).toBe(i);
    expect(c.content.length).toBeLessThanOrEqual(size);
    expect(norm.slice(c.start, c.end)).toBe(c.content);
    expect(c.content).toBe(c.content.trim());
    if (i > 0) {
      const prev = chunks[i - 1]!;
      expect(c.start).toBeGreaterThan(prev.start);
      // Shared characters never exceed the overlap.
      expect(Math.max(0, prev.end - c.start)).toBeLessThanOrEqual(overlap);
    }
  });
  const covered = new Uint8Array(norm.length);
  for (const c of chunks) covered.fill(1, c.start, c.end);
  for (let i = 0; i < norm.length; i++) if (!/\s/.test(norm[i]!)) expect(covered[i]).toBe(1);
  return chunks;
}

describe('chunker', () => {
  it('keeps a short text in one chunk, trimmed', () => {
    const chunks = chunkText('  Hello there.\n\nA second paragraph.  ', { chunkSize: 1000, chunkOverlap: 200 });
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.content).toBe('Hello there.\n\nA second paragraph.');
  });

  it('returns no chunks for whitespace only', () => {
    expect(chunkText(' \n\n\t ', { chunkSize: 100, chunkOverlap: 0 })).toEqual([]);
  });

  it('ends chunks at sentence boundaries and repeats whole trailing sentences as overlap', () => {
    const text = paragraph(0, 30);
    const chunks = checkInvariants(text, 300, 80);
    expect(chunks.length).toBeGreaterThan(5);
    for (const [i, c] of chunks.entries()) {
      expect(c.content).toMatch(/^Sentence number \d+/);
      expect(c.content).toMatch(/detail\.$/);
      if (i > 0) {
        const shared = chunks[i - 1]!.end - c.start;
        expect(shared).toBeGreaterThan(0); // each sentence is ~60 chars, so one fits the 80-char overlap
        expect(chunks[i - 1]!.content.endsWith(c.content.slice(0, shared))).toBe(true);
      }
    }
  });

  it('has no shared text with chunkOverlap 0', () => {
    const chunks = checkInvariants(paragraph(0, 40), 250, 0);
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.start).toBeGreaterThanOrEqual(chunks[i - 1]!.end);
  });

  it('prefers to end a chunk at a paragraph break over filling it with the next paragraph', () => {
    // ~300 then ~420 characters: the first sentences of the second paragraph would fit after the first, but
    // the whole paragraph would not, so the chunk ends at the paragraph break instead.
    const text = [paragraph(0, 5), paragraph(5, 7)].join('\n\n');
    const chunks = checkInvariants(text, 500, 0);
    expect(chunks.map((c) => c.content)).toEqual(text.split('\n\n'));
  });

  it('splits an over-long sentence between words, leaving room for the overlap', () => {
    const long = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ') + '.';
    const chunks = checkInvariants(long, 150, 40);
    expect(chunks.length).toBeGreaterThan(8);
    for (const c of chunks) {
      expect(c.content).toMatch(/^word\d+/);
      expect(c.content).toMatch(/word\d+\.?$/);
    }
    for (let i = 1; i < chunks.length; i++) expect(chunks[i - 1]!.end - chunks[i]!.start).toBeGreaterThan(0);
  });

  it('cuts a word longer than the chunk size', () => {
    const chunks = checkInvariants(`Start. ${'x'.repeat(450)} end.`, 100, 20);
    expect(chunks.every((c) => c.content.length <= 100)).toBe(true);
    expect(chunks.map((c) => c.content).join('')).toContain('x'.repeat(100));
  });

  it('holds its invariants across sizes and overlaps on mixed text', () => {
    const text = [
      paragraph(0, 3),
      'A list:\n- first item\n- second item that is a little longer\n- third',
      paragraph(3, 12),
      'Q: Does it work?\r\nA: Yes! It does... mostly.',
      'y'.repeat(120),
    ].join('\n\n');
    for (const [size, overlap] of [
      [100, 0],
      [100, 99],
      [150, 50],
      [400, 200],
      [1000, 500],
      [4000, 0],
    ] as const) {
      checkInvariants(text, size, overlap);
    }
  });

  it('normalises CRLF and drops NUL characters', () => {
    expect(normalizeText('a\r\nb\rc\u0000d')).toBe('a\nb\ncd');
  });
});

describe('html extraction', () => {
  it('keeps headings and paragraphs, drops scripts, styles and navigation', () => {
    const page = extractReadableText(`<!doctype html><html><head><title>Tides &amp; Moon</title>
      <style>body { color: red }</style><script>var secret = 1;</script></head>
      <body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
      <h1>Why tides happen</h1><p>The Moon&#39;s gravity pulls&nbsp;the sea.</p>
      <!-- a comment --><p>Two <b>high</b> tides a day.<br>Roughly.</p>
      <footer>Copyright</footer><script type="module">alert(1)</script></body></html>`);
    expect(page.title).toBe('Tides & Moon');
    expect(page.text).toBe("Why tides happen\n\nThe Moon's gravity pulls the sea.\n\nTwo high tides a day.\nRoughly.");
  });

  it('prefers the main element when there is one', () => {
    const page = extractReadableText('<body><div>Sidebar junk</div><main><p>Real content.</p></main></body>');
    expect(page.text).toBe('Real content.');
  });
});
