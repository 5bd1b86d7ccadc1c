// MarkdownFeed: a reply split into blocks as it streams, reading only what arrived and the block
// still open, never the text before it, with the same blocks as splitting the whole text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_BLOCK_CHARS, MarkdownFeed, blockSource, splitMarkdown } from '../../src/ui/markdown';

/** The block sources of `text` split in one call, as for a stored message. */
const whole = (text: string, max?: number) =>
  splitMarkdown(text, { start: 0 }, true, max).blocks.map((b) => blockSource(text, b));

/** Chat-like markdown of about `chars` characters: paragraphs, lists, fenced code, tables. */
function reply(chars: number): string {
  const parts = [
    'Some **bold** words and `code` in a paragraph that goes on for a while.\n\n',
    '- one\n- two\n\n  still two\n- three\n\n',
    '```ts\nconst x = 1;\n\nconst y = 2;\n```\n\n',
    '| a | b |\n| - | - |\n| 1 | 2 |\n\n',
    '# A heading\n\n',
    'A line without an end '.repeat(40) + '\n\n',
  ];
  let text = '';
  for (let i = 0; text.length < chars; i++) text += parts[i % parts.length];
  return text;
}

describe('MarkdownFeed', () => {
  it('gives the blocks of the whole text however it arrives, the open block holding the rest', () => {
    const line = fc.oneof(
      fc.constantFrom('', ' ', '```', '```ts', '~~~', '- item', '2. item', '> quote', '# Head'),
      fc.constantFrom('    code', '  lazy', '---', '| a | b |', 'x'.repeat(90), '🙂 é'),
      fc.lorem({ maxCount: 12 }),
    );
    const doc = fc.array(line, { maxLength: 60 }).map((lines) => lines.join('\n'));
    fc.assert(
      fc.property(
        doc,
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.integer({ min: 24, max: 200 }),
        (text, cuts, max) => {
          const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
          const pieces = [0, ...at].map((a, i, all) => text.slice(a, all[i + 1] ?? text.length));
          const feed = new MarkdownFeed(max);
          const got: string[] = [];
          let fed = '';
          for (const piece of pieces) {
            feed.append(piece);
            fed += piece;
            got.push(...feed.split(false));
            // The open block (after the fence it continues, if it was cut inside one).
            expect(feed.openSource().endsWith(fed.slice(feed.base))).toBe(true);
            expect(feed.all).toBe(fed);
          }
          got.push(...feed.split(true));
          expect(got).toEqual(whole(text, max));
          expect(feed.openSource()).toBe('');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads, for each piece that arrives, that piece and the open block only, however long the text', () => {
    const text = reply(1024 * 1024);
    const piece = 700;
    const feed = new MarkdownFeed();
    const got: string[] = [];
    let most = 0;
    for (let at = 0; at < text.length; at += piece) {
      const before = feed.read;
      feed.append(text.slice(at, at + piece));
      got.push(...feed.split(false));
      most = Math.max(most, feed.read - before);
    }
    got.push(...feed.split(true));
    expect(got).toEqual(whole(text));
    // The whole text is 1 MB; each step read at most one block's worth and what arrived.
    expect(most).toBeLessThanOrEqual(MAX_BLOCK_CHARS + piece);
    expect(feed.read).toBeLessThan(text.length * 4);
  });

  it('goes on from the open block when the text is taken whole again, and starts afresh otherwise', () => {
    const feed = new MarkdownFeed();
    feed.append('One.\n\nTwo is still  \n');
    expect(feed.split(false)).toEqual(['One.\n\n']);
    // Stored: trailing space trimmed. The closed block stays; only the open one is read again.
    expect(feed.restart('One.\n\nTwo is still')).toBe(true);
    expect(feed.split(true)).toEqual(['Two is still']);
    const other = new MarkdownFeed();
    other.append('One.\n\nTwo\n');
    other.split(false);
    expect(other.restart('Uno.\n\nTwo\n')).toBe(false);
    expect(other.all).toBe('One.\n\nTwo\n');
  });
});
