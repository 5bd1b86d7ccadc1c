// A Markdown export viewed in a viewer that allows HTML (issue 10): nothing taken from a memory's
// path, content or context becomes live HTML, a script link or an image; what renders is our
// structure (headings, paragraphs, the chunk quote list, JSON code blocks and our comments) and
// the plain styling that text content may carry. The file still imports back exactly.
import fc from 'fast-check';
import { marked } from 'marked';
import { describe, expect, it } from 'vitest';
import {
  entriesToMarkdown,
  parseMarkdown,
  type PortableChunk,
  type PortableEntry,
} from '../../src/memory/markdown';
import { parsePath } from '../../src/memory/paths';
import type { JsonValue } from '../../src/memory/types';

const T0 = new Date('2025-03-04T05:06:07.089Z');

const ATTACKS = [
  '<img src=x onerror=alert(1)>',
  '<script>alert(1)</script>',
  '<svg/onload=alert(1)>',
  '<a href="javascript:alert(1)">x</a>',
  '<iframe srcdoc="<script>alert(1)</script>">',
  '<!-- x --><img src=x onerror=alert(1)>',
  '<div>\n\n<img src=x onerror=alert(1)>\n\n</div>',
  '[click](javascript:alert(1))',
  '![img](x" onerror="alert(1))',
  '[ref]\n\n[ref]: javascript:alert(1)',
  '<javascript:alert(1)>',
  '&lt;img src=x onerror=alert(1)&gt;',
  '&#60;script&#62;alert(1)&#60;/script&#62;',
  '\\<img src=x onerror=alert(1)>',
  '`<img src=x onerror=alert(1)>`',
  '**<img src=x onerror=alert(1)>**',
  'x <b onmouseover=alert(1)>hover</b> y',
  '--!><img src=x onerror=alert(1)>',
];

function chunk(text: string): PortableChunk {
  return { turn_id: 1, sentence_id: 0, role: 'user', text, similarity: 0.5, tokenCount: 3 };
}

function entry(path: string, content: JsonValue, texts: string[] = []): PortableEntry {
  return {
    path,
    content,
    contextChunks: texts.map(chunk),
    version: 1,
    created: T0,
    modified: T0,
    accessed: T0,
  };
}

/** A path segment made from `text`: slashes and what parsePath refuses replaced. */
function segment(text: string): string {
  const s = text
    .replace(/\//g, '|')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ')
    .trim()
    .slice(0, 100);
  return s === '' || s === '.' || s === '..' ? 'x' : s;
}

/**
 * Our comments: one line each, `<` and `>` escaped inside, so they end where we end them; and the
 * file's end line.
 */
const OUR_COMMENT =
  /<!-- (?:structured-memory(?:-heading|-export)?|chunk) \{[^<>]*\} -->|<!-- structured-memory-end -->/g;
/**
 * Tags that only structure or style text: our headings, paragraphs, quote list and JSON blocks,
 * and the emphasis, lists or tables that plain-text content may hold. No images and no attributes
 * but a code block's language, a list's start number and a table cell's alignment; the only links
 * are GitHub-style autolinks of a bare web or e-mail address (`http:`, `https:`, `mailto:`).
 */
const INERT_TAG =
  /^<\/?(?:h[1-6]|p|blockquote|ul|li|strong|em|del|pre|hr|br|table|thead|tbody|tr|a|code(?: class="language-json")?|ol(?: start="\d+")?|t[hd](?: align="(?:left|center|right)")?)>$|^<a href="(?:https?:\/\/|mailto:)[^"<>]*">$/;

/** Every piece of HTML in the rendered export that is not ours. */
function foreignHtml(md: string): string[] {
  const html = (marked.parse(md, { async: false }) as string).replace(OUR_COMMENT, '');
  return (html.match(/<[^>]*>?/g) ?? []).filter((tag) => !INERT_TAG.test(tag));
}

function expectInert(entries: PortableEntry[], title?: string): string {
  const md = entriesToMarkdown(entries, { exported: T0, title });
  expect(foreignHtml(md), md).toEqual([]);
  const parsed = parseMarkdown(md);
  if (!parsed.ok) throw new Error(parsed.errors.join('\n') + '\n---\n' + md);
  const byPath = (a: PortableEntry, b: PortableEntry) => (a.path < b.path ? -1 : 1);
  expect([...parsed.entries].sort(byPath)).toEqual([...entries].sort(byPath));
  return md;
}

describe('the Markdown export carries no live HTML', () => {
  it('in content, as text or inside text', () => {
    expectInert(ATTACKS.map((a, i) => entry(`Content/C${i}`, a)));
    expectInert(ATTACKS.map((a, i) => entry(`Inside/C${i}`, `Before ${a} after.\nNext line.`)));
  });

  it('in context chunks, shown in the quote list', () => {
    expectInert([entry('Chunks', 'text', ATTACKS)]);
    expectInert([
      entry(
        'Multiline',
        'text',
        ATTACKS.map((a) => `${a}\nsecond line `),
      ),
    ]);
  });

  it('in paths, at every heading level, and in the title', () => {
    const entries = ATTACKS.map((a, i) => entry(`Paths/${segment(a)}/${i}`, 'x'));
    entries.push(entry(`A/B/C/D/E/F/${segment(ATTACKS[0])}/${segment(ATTACKS[1])}`, 'deep'));
    expectInert(entries, ATTACKS[0]);
  });

  it('for any text, anywhere (property)', () => {
    const hostile = fc.oneof(
      fc.constantFrom(...ATTACKS),
      fc.stringMatching(/^[<>a-z ="'/!&;#\-[\]()`*\\\n]{0,40}$/),
      fc.string({ maxLength: 30 }),
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({
            seg: hostile.map(segment),
            content: fc.oneof(hostile, fc.dictionary(hostile, hostile, { maxKeys: 2 })),
            texts: fc.array(hostile, { maxLength: 3 }),
          }),
          { selector: (r) => r.seg, maxLength: 5 },
        ),
        (records) => {
          const entries = records
            .map((r, i) => entry(`P${i}/${r.seg}`, r.content as JsonValue, r.texts))
            .filter((e) => {
              const p = parsePath(e.path);
              return p.ok && p.path === e.path;
            });
          expectInert(entries);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('still writes ordinary text as text and shows ordinary chunk text as is', () => {
    const md = expectInert([
      entry('Plain', 'Ship phase one by March.\n\nThen polish; a > b, AT&T, snake_case.', [
        'We need phase one by March.',
      ]),
    ]);
    expect(md).toContain('\nShip phase one by March.\n\nThen polish; a > b, AT&T, snake_case.\n');
    expect(md).toMatch(
      /\n> - \*\*user\*\* \(similarity 0\.50\): We need phase one by March\. <!--/,
    );
  });

  it('keeps text with markup exactly, in a JSON block or the chunk comment', () => {
    const md = expectInert([entry('Markup', ATTACKS[0], [ATTACKS[0]])]);
    expect(md).toContain('```json\n"<img src=x onerror=alert(1)>"\n```');
    expect(md).toContain('): \\<img src=x onerror=alert(1)\\> <!-- chunk {');
  });
});
