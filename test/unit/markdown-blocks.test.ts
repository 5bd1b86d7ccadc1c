// splitMarkdown: a reply cut into top-level blocks that render alone as they do in place, the
// same blocks however the text arrived, none longer than the limit.
import fc from 'fast-check';
import { Marked } from 'marked';
import { describe, expect, it } from 'vitest';
import {
  blockSource,
  splitMarkdown,
  type MarkdownBlock,
  type SplitPoint,
} from '../../src/ui/markdown';

/** The blocks of `text` in one call, as for a stored message. */
const whole = (text: string, max?: number) => splitMarkdown(text, { start: 0 }, true, max).blocks;

/** The blocks of `text` arriving in `pieces`, as while it streams, then closed. */
function streamed(pieces: string[], max?: number): MarkdownBlock[] {
  const blocks: MarkdownBlock[] = [];
  let text = '';
  let from: SplitPoint = { start: 0 };
  for (const piece of pieces) {
    text += piece;
    const r = splitMarkdown(text, from, false, max);
    blocks.push(...r.blocks);
    from = r.rest;
  }
  blocks.push(...splitMarkdown(text, from, true, max).blocks);
  return blocks;
}

const sources = (text: string, blocks: MarkdownBlock[]) => blocks.map((b) => blockSource(text, b));

describe('splitMarkdown', () => {
  it('splits at blank lines before a line in the first column', () => {
    const text = '# Title\n\nFirst paragraph\nstill first.\n\nSecond.\n\n\n> quote\n';
    expect(sources(text, whole(text))).toEqual([
      '# Title\n\n',
      'First paragraph\nstill first.\n\n',
      'Second.\n\n\n',
      '> quote\n',
    ]);
  });

  it('keeps fenced code, loose lists and indented continuations whole', () => {
    const text = [
      'Intro:',
      '',
      '```ts',
      'const a = 1;',
      '',
      'const b = 2;',
      '```',
      '',
      '1. one',
      '',
      '2. two',
      '',
      '   more of two',
      '',
      '    indented code',
      '',
      'After.',
    ].join('\n');
    expect(sources(text, whole(text))).toEqual([
      'Intro:\n\n',
      '```ts\nconst a = 1;\n\nconst b = 2;\n```\n\n',
      '1. one\n\n2. two\n\n   more of two\n\n    indented code\n\n',
      'After.',
    ]);
  });

  it('an unclosed fence runs to the end, and ~~~ fences close only with ~~~', () => {
    const text = '~~~\na\n\n```\n\nb\n~~~\n\nc\n\n```js\nopen\n\nstill';
    expect(sources(text, whole(text))).toEqual([
      '~~~\na\n\n```\n\nb\n~~~\n\n',
      'c\n\n',
      '```js\nopen\n\nstill',
    ]);
  });

  it('cuts a long block at a line end, and a code block it cuts goes on under its fence', () => {
    const code = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
    const text = `\`\`\`py\n${code}\n\`\`\`\n\nafter`;
    const blocks = whole(text, 64);
    const src = sources(text, blocks);
    for (const s of src) expect(s.length).toBeLessThanOrEqual(64 + '```py\n'.length);
    expect(blocks.slice(1, -1).every((b) => b.fence === '```py')).toBe(true);
    expect(blocks.at(-1)).toEqual({ start: text.length - 5, end: text.length });
    // Every piece of the code renders as code.
    const md = new Marked();
    for (const s of src.slice(0, -1)) expect(md.parse(s, { async: false })).toMatch(/^<pre>/);
  });

  it('cuts a line with no end at a space, and text with no space at the limit (not inside a pair)', () => {
    const words = 'word '.repeat(30);
    expect(sources(words, whole(words, 32)).every((s) => s.length <= 32 && s.endsWith(' '))).toBe(
      true,
    );
    const emoji = '🙂'.repeat(40);
    const src = sources(emoji, whole(emoji, 33));
    expect(src.join('')).toBe(emoji);
    expect(src.every((s) => !/[\ud800-\udbff]$/.test(s) && !/^[\udc00-\udfff]/.test(s))).toBe(true);
  });

  it('leaves the open block and an unfinished line for later', () => {
    const r = splitMarkdown('One.\n\nTwo is still\n\nThr', { start: 0 }, false);
    expect(r.blocks).toEqual([{ start: 0, end: 6 }]);
    expect(r.rest).toEqual({ start: 6 });
    const again = splitMarkdown('One.\n\nTwo is still\n\nThree.\n', r.rest, false);
    expect(again.blocks).toEqual([{ start: 6, end: 20 }]);
    expect(again.rest).toEqual({ start: 20 });
  });

  it('gives the same blocks however the text arrives, tiling it, none over the limit', () => {
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
          const one = whole(text, max);
          expect(streamed(pieces, max)).toEqual(one);
          let pos = 0;
          for (const b of one) {
            expect(b.start).toBe(pos);
            expect(b.end).toBeGreaterThan(b.start);
            expect(b.end - b.start).toBeLessThanOrEqual(max);
            pos = b.end;
          }
          expect(pos).toBe(text.length);
        },
      ),
      { numRuns: 400 },
    );
  });
});
