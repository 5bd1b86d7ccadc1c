// Markdown export/import (docs/design.md, "Markdown export and import"): exact round trips,
// readable output, clear errors, no throws.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  entriesToMarkdown,
  parseMarkdown,
  type PortableChunk,
  type PortableEntry,
} from '../../src/memory/markdown';
import { parsePath } from '../../src/memory/paths';
import type { JsonValue, Role } from '../../src/memory/types';
import { MAX_DATE_MS, MIN_DATE_MS } from '../../src/memory/validate';

const T0 = new Date('2025-03-04T05:06:07.089Z');
const T1 = new Date('2025-03-05T10:11:12.345Z');
const T2 = new Date('2025-03-06T23:59:59.999Z');

function entry(
  path: string,
  content: JsonValue,
  contextChunks: PortableChunk[] = [],
): PortableEntry {
  return { path, content, contextChunks, version: 3, created: T0, modified: T1, accessed: T2 };
}

function chunk(text: string, overrides: Partial<PortableChunk> = {}): PortableChunk {
  return {
    turn_id: 7,
    sentence_id: 2,
    role: 'user',
    text,
    similarity: 0.8312345678901234,
    tokenCount: 11,
    ...overrides,
  };
}

const byPath = (a: PortableEntry, b: PortableEntry) =>
  a.path < b.path ? -1 : a.path > b.path ? 1 : 0;

function roundTrip(entries: PortableEntry[]): PortableEntry[] {
  const md = entriesToMarkdown(entries, { exported: T0 });
  const parsed = parseMarkdown(md);
  if (!parsed.ok) throw new Error(`parse failed:\n${parsed.errors.join('\n')}\n---\n${md}`);
  return parsed.entries;
}

function expectRoundTrip(entries: PortableEntry[]): void {
  expect([...roundTrip(entries)].sort(byPath)).toEqual([...entries].sort(byPath));
}

/** Errors of a file that must not parse. */
function errorsOf(md: string): string[] {
  const parsed = parseMarkdown(md);
  if (parsed.ok) throw new Error('expected the file to be rejected');
  return parsed.errors;
}

const META = (path: string, extra = '') =>
  `<!-- structured-memory {"path":${JSON.stringify(path)},"version":1,` +
  `"created":"2025-01-01T00:00:00.000Z","modified":"2025-01-02T00:00:00.000Z",` +
  `"accessed":"2025-01-03T00:00:00.000Z"${extra}} -->`;
const CHUNK_META = '"turn_id":1,"sentence_id":0,"role":"user","similarity":0.5,"tokenCount":3';

describe('entriesToMarkdown → parseMarkdown round-trips exactly', () => {
  it('keeps tricky string content', () => {
    const strings = [
      'plain sentence',
      'two\nlines',
      'paragraphs\n\nwith a blank line\n\n\nand two',
      '  leading spaces',
      'trailing spaces  ',
      'trailing newline\n',
      '\nleading newline',
      '# not a heading',
      'text\n## heading inside',
      '#hashtag at start',
      '> quoted',
      'a > b and <b>tags</b>',
      '```\ncode\n```',
      'inline ``` fence ```` run',
      '~~~\ntilde fence\n~~~',
      'ends the comment -->',
      '<!-- opens a comment',
      '<!-- structured-memory {"path":"Evil","version":1} -->',
      'Title\n===',
      'Title\n---',
      '- a list\n- of items\n1. numbered',
      'windows\r\nline end',
      'lone \r carriage return',
      'tab\tinside',
      '\tleading tab',
      'unicode: héllo wörld 日本語 🙂 \u{1F468}\u200D\u{1F469}',
      'line sep \u2028 and para sep \u2029 and NEL \u0085',
      'bom \ufeff inside',
      'control \u0001\u0007\u001b chars',
      'lone surrogate \ud800 here',
      'lone low \udc00',
      'e\u0301 decomposed',
      '',
      ' ',
      '\n',
      '"quoted"',
      '42',
      'null',
      '**bold** and _em_ and [link](http://x)',
      '    indented code',
      'a\\b backslash',
    ];
    expectRoundTrip(strings.map((s, i) => entry(`Strings/S${i}`, s)));
  });

  it('keeps non-string content', () => {
    const values: JsonValue[] = [
      0,
      -0,
      42,
      -1.5e-300,
      1.7976931348623157e308,
      0.1 + 0.2,
      true,
      false,
      null,
      [],
      {},
      [1, 'two', [3, [4, { five: 5 }]], null, false],
      { nested: { deeper: { deepest: ['x', { '': 'empty key' }] } }, 'a b': '-->', '<!--': '```' },
      { __proto__: 'own key', constructor: 1 } as JsonValue,
      { text: 'with\nnewline and ````` backticks', emoji: '🙂' },
      ['\u2028', '\ufeff', '\u0085', '\ud800'],
    ];
    expectRoundTrip(values.map((v, i) => entry(`Values/V${i}`, v)));
  });

  it('keeps -0 distinct from 0', () => {
    const [back] = roundTrip([
      entry('Zero', [-0, 0]),
      entry('Sim', 'x', [chunk('t', { similarity: -0 })]),
    ])
      .sort(byPath)
      .slice(1);
    expect(Object.is((back.content as number[])[0], -0)).toBe(true);
    expect(Object.is((back.content as number[])[1], 0)).toBe(true);
  });

  it('keeps context chunks exactly', () => {
    const chunks: PortableChunk[] = [
      chunk('We need phase one by March.'),
      chunk('multi\nline\n\ntext', { role: 'assistant', turn_id: 8, sentence_id: 0 }),
      chunk('> looks like a quote', { role: 'system' }),
      chunk('**bold** text with `code` and # hash', { role: 'tool' }),
      chunk('closes --> the comment', { similarity: 0.1 }),
      chunk('opens <!-- chunk {"turn_id":99} --> a fake one'),
      chunk(' leading space'),
      chunk('trailing space '),
      chunk(''),
      chunk('unicode 日本語 🙂 \u2028 sep'),
      chunk('lone \udfff surrogate'),
      chunk('ends with parens (similarity 0.5): x'),
      chunk('tab\tinside'),
      chunk('plain', { similarity: 1e-17, tokenCount: 0, turn_id: 0, sentence_id: 0 }),
      chunk('plain', { similarity: -0.9999999999999999, tokenCount: 123456, turn_id: 2 ** 40 }),
      chunk('largest numbers', {
        tokenCount: Number.MAX_SAFE_INTEGER,
        turn_id: Number.MAX_SAFE_INTEGER,
        sentence_id: Number.MAX_SAFE_INTEGER,
      }),
    ];
    expectRoundTrip([
      entry('Project/WithChunks', 'content', chunks),
      entry('Project/NoChunks', 'x'),
    ]);
  });

  it('keeps paths with spaces, unicode, markdown characters and deep nesting', () => {
    expectRoundTrip([
      entry('My Project/Goals and Plans/Phase 1', 'a'),
      entry('Ünïcødé/日本語/🙂', 'b'),
      entry('Markup/*stars*/_under_/`tick`/#hash/<tag>/[link]', 'c'),
      entry('Comment/-->/<!--', 'd'),
      entry('A/B/C/D/E/F/G/H/I/J/K/L', 'twelve levels'),
      entry('A/B/C/D/E/F/G', 'seven levels'),
      entry('A/B', 'an entry with children'),
      entry('A', { also: 'an entry' }),
      entry('User/Pref', 1),
      entry('User/Preferences', 2),
      entry('User/Pref/Sub', 3),
      entry('User/Pref Sub', 4),
      entry('User/Pref-Sub', 5),
    ]);
  });

  it('keeps exact dates and versions', () => {
    const e: PortableEntry = {
      path: 'Dates',
      content: 'x',
      contextChunks: [],
      version: 987654,
      created: new Date(0),
      modified: new Date(-1),
      accessed: new Date(MAX_DATE_MS),
    };
    expectRoundTrip([
      e,
      { ...e, path: 'Dates2', created: new Date(MIN_DATE_MS), version: Number.MAX_SAFE_INTEGER },
    ]);
  });

  it('round-trips an empty export', () => {
    const parsed = parseMarkdown(entriesToMarkdown([], { exported: T0 }));
    expect(parsed).toEqual({ ok: true, entries: [] });
  });

  it('survives CRLF line endings, a BOM and trailing whitespace from an editor', () => {
    const entries = [
      entry('Edited/Text', 'first line\nsecond line\n\nthird', [
        chunk('said this'),
        chunk('two\nlines'),
      ]),
      entry('Edited/Json', { a: [1, 2] }),
    ];
    const md = entriesToMarkdown(entries, { exported: T0 });
    const edited =
      '\ufeff' +
      md
        .split('\n')
        .map((line) => line + ' \t')
        .join('\r\n');
    const parsed = parseMarkdown(edited);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.entries.sort(byPath)).toEqual(entries.sort(byPath));
  });

  it('reads entries in any order, without the title or folder headings', () => {
    const md = [
      '## Child',
      META('Top/Child'),
      '',
      'child text',
      '',
      '# Top',
      META('Top'),
      '```json',
      '{ "k": [1, 2] }',
      '```',
      '> - **user** (similarity 0.50): hello there <!-- chunk {' + CHUNK_META + '} -->',
    ].join('\n');
    const parsed = parseMarkdown(md);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.entries.map((e) => [e.path, e.content])).toEqual([
      ['Top/Child', 'child text'],
      ['Top', { k: [1, 2] }],
    ]);
    expect(parsed.entries[1].contextChunks).toEqual([
      {
        turn_id: 1,
        sentence_id: 0,
        role: 'user',
        text: 'hello there',
        similarity: 0.5,
        tokenCount: 3,
      },
    ]);
  });

  it('takes the visible chunk text when a person edits it, and defaults accessed to modified', () => {
    const md = [
      '# Title',
      '## Note',
      '<!-- structured-memory {"path":"Note","version":2,"created":"2025-01-01T00:00:00Z","modified":"2025-01-02T00:00:00.5Z"} -->',
      'text',
      '> - **user** (similarity 0.50): edited by hand <!-- chunk {' + CHUNK_META + '} -->',
    ].join('\n');
    const parsed = parseMarkdown(md);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.entries[0].contextChunks[0].text).toBe('edited by hand');
    expect(parsed.entries[0].accessed.toISOString()).toBe('2025-01-02T00:00:00.500Z');
  });

  it('normalises the path from the comment', () => {
    const parsed = parseMarkdown(`# x\n${META(' /A / B/ ')}\ntext\n`);
    expect(parsed.ok && parsed.entries[0].path).toBe('A/B');
  });
});

// ---------------------------------------------------------------------------------------------

const segmentArb = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 12 })
  .map((s) => s.replace(/\//g, '_'))
  .filter((s) => {
    const p = parsePath(s);
    return p.ok && p.path === s && p.segments.length === 1;
  });

const pathArb = fc
  .array(
    fc.oneof(
      segmentArb,
      fc.constantFrom('A', 'B', 'Goals', 'My Project', '#', '>', '-->', '<!--', '```', '*', '日本'),
    ),
    { minLength: 1, maxLength: 12 },
  )
  .map((segments) => segments.join('/'))
  .filter((p) => {
    const parsed = parsePath(p);
    return parsed.ok && parsed.path === p;
  });

const finite = fc.double({ noNaN: true, noDefaultInfinity: true });
const textArb = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('', ' x ', 'a\nb', '-->', '<!-- chunk {} -->', '> - **user**: x', '```', '# h'),
  fc.stringMatching(/^[a-z #>\n*`<!->-]{0,30}$/),
);

const wholeArb = fc.oneof(fc.nat(), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));
const chunkArb: fc.Arbitrary<PortableChunk> = fc.record({
  turn_id: wholeArb,
  sentence_id: wholeArb,
  role: fc.constantFrom<Role>('user', 'assistant', 'system', 'tool'),
  text: textArb,
  similarity: fc.oneof(fc.double({ min: -1, max: 1, noNaN: true }), finite),
  tokenCount: wholeArb,
});

const dateArb = fc.date({
  min: new Date(MIN_DATE_MS),
  max: new Date(MAX_DATE_MS),
  noInvalidDate: true,
});

const contentArb: fc.Arbitrary<JsonValue> = fc
  .oneof(
    fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue>,
    fc.jsonValue({ maxDepth: 2, stringUnit: 'binary' }) as fc.Arbitrary<JsonValue>,
    textArb,
  )
  .filter((v) => new TextEncoder().encode(JSON.stringify(v)).length <= 32 * 1024);

const entryArb: fc.Arbitrary<PortableEntry> = fc.record({
  path: pathArb,
  content: contentArb,
  contextChunks: fc.array(chunkArb, { maxLength: 4 }),
  version: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  created: dateArb,
  modified: dateArb,
  accessed: dateArb,
});

describe('property: arbitrary entries round-trip', () => {
  it('parseMarkdown(entriesToMarkdown(entries)) deep-equals entries', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(entryArb, { selector: (e) => e.path, maxLength: 8 }),
        fc.option(fc.string({ unit: 'binary', maxLength: 20 }), { nil: undefined }),
        (entries, title) => {
          const md = entriesToMarkdown(entries, { title, exported: T0 });
          const parsed = parseMarkdown(md);
          if (!parsed.ok) throw new Error(parsed.errors.join('\n') + '\n---\n' + md);
          expect([...parsed.entries].sort(byPath)).toEqual([...entries].sort(byPath));
          // -0 survives too (toEqual already distinguishes it; this makes the intent explicit).
          const again = entriesToMarkdown(parsed.entries, { title, exported: T0 });
          expect(again).toBe(md);
        },
      ),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------------------------

describe('parseMarkdown rejects bad files with clear, located errors', () => {
  const good = entriesToMarkdown([entry('Good/One', 'fine', [chunk('said')])], { exported: T0 });

  it('accepts the baseline file', () => {
    expect(parseMarkdown(good).ok).toBe(true);
  });

  it.each([
    [
      'an invalid path',
      META('A//B'),
      /^line 2: invalid path "A\/\/B": path "A\/\/B" has an empty segment/,
    ],
    ['a dot segment', META('A/../B'), /^line 2: invalid path "A\/..\/B": .*"\." and "\.\."/],
    [
      'a path that is not a string',
      META('x').replace('"x"', '42'),
      /^line 2: invalid path: path must be a string/,
    ],
    ['a too-deep path', META('a/b/c/d/e/f/g/h/i/j/k/l/m'), /^line 2: invalid path .*13 levels/],
    [
      'a zero version',
      META('A').replace('"version":1', '"version":0'),
      /^line 2: "version" must be a whole number from 1 to 9007199254740991, got 0/,
    ],
    [
      'a fractional version',
      META('A').replace('"version":1', '"version":1.5'),
      /^line 2: "version" must be a whole number from 1 to 9007199254740991, got 1.5/,
    ],
    [
      'a string version',
      META('A').replace('"version":1', '"version":"1"'),
      /^line 2: "version" must be a whole number from 1 to 9007199254740991, got "1"/,
    ],
    [
      'a version past 2^53 - 1',
      META('A').replace('"version":1', '"version":9007199254740992'),
      /^line 2: "version" must be a whole number from 1 to 9007199254740991/,
    ],
    [
      'a date past year 9999',
      META('A').replace('"2025-01-01T00:00:00.000Z"', '"+010000-01-01T00:00:00.000Z"'),
      /^line 2: "created" must be a date from year 0000 to 9999 \(UTC\), got \+010000-01-01T/,
    ],
    [
      'a date before year 0 once its offset is applied',
      META('A').replace('"2025-01-01T00:00:00.000Z"', '"0000-01-01T00:00:00+01:00"'),
      /^line 2: "created" must be a date from year 0000 to 9999 \(UTC\), got -000001-12-31T23/,
    ],
    [
      'a bad date',
      META('A').replace('"2025-01-01T00:00:00.000Z"', '"yesterday"'),
      /^line 2: "created" must be an ISO date .*got "yesterday"/,
    ],
    [
      'an impossible date',
      META('A').replace('2025-01-02T00:00:00.000Z', '2025-13-45T00:00:00.000Z'),
      /^line 2: "modified" must be an ISO date/,
    ],
    [
      'a missing date',
      META('A').replace(/"created":"[^"]*",/, ''),
      /^line 2: "created" must be an ISO date .*got nothing/,
    ],
    [
      'broken JSON',
      '<!-- structured-memory {"path":"A",} -->',
      /^line 2: the structured-memory comment is not valid JSON/,
    ],
    [
      'a non-object comment',
      '<!-- structured-memory ["A"] -->',
      /^line 2: the structured-memory comment must hold a JSON object/,
    ],
    [
      'an unclosed comment',
      '<!-- structured-memory {"path":"A"}',
      /^line 2: a structured-memory comment must be one line ending with -->/,
    ],
  ])('reports %s', (_name, metaLine, pattern) => {
    const errors = errorsOf(`# Heading\n${metaLine}\n\ncontent\n`);
    expect(
      errors.some((e) => pattern.test(e)),
      errors.join('\n'),
    ).toBe(true);
  });

  it('reads a heading line of many spaces and # at once, its closing # left out', () => {
    // A closing run of # is dropped; a long line of spaces and # must not stall the reader.
    const errors = errorsOf(`${good}\n## Notes ##\n`);
    expect(errors[0]).toMatch(/heading "Notes" has no/);
    const long = `# a${' '.repeat(200_000)}${'#'.repeat(200_000)}x`;
    expect(errorsOf(`${good}\n${long}\n`)[0]).toMatch(/^line \d+: heading "a {10}/);
    const closed = `# a${' '.repeat(200_000)}${'#'.repeat(200_000)}`;
    expect(errorsOf(`${good}\n${closed}\n`)[0]).toMatch(/heading "a" has no/);
  });

  it('reports a heading without a metadata comment', () => {
    const errors = errorsOf(`${good}\n## Notes\n\nsome notes\n`);
    expect(errors).toEqual([
      expect.stringMatching(
        /^line \d+: heading "Notes" has no <!-- structured-memory .* comment under it/,
      ),
    ]);
    const line = Number(/^line (\d+)/.exec(errors[0])![1]);
    expect(`${good}\n## Notes\n`.split('\n')[line - 1]).toBe('## Notes');
  });

  it('reports duplicate paths, with the first occurrence', () => {
    const errors = errorsOf(`# A\n${META('A')}\none\n\n# A again\n${META(' A ')}\ntwo\n`);
    expect(errors).toEqual(['line 6: duplicate path "A" (first at line 2)']);
  });

  it('reports invalid JSON content', () => {
    const errors = errorsOf(`# A\n${META('A')}\n\n\`\`\`json\n{ "a": 1,, }\n\`\`\`\n`);
    expect(errors).toEqual([
      expect.stringMatching(/^line 4: the JSON content of entry "A" is not valid JSON: /),
    ]);
  });

  it('reports an unclosed code block', () => {
    const errors = errorsOf(`# A\n${META('A')}\n\n\`\`\`json\n{ "a": 1 }\n`);
    expect(errors).toEqual(['line 4: this code block is never closed (add a closing ``` line)']);
  });

  it('reports a code block not marked json', () => {
    const errors = errorsOf(`# A\n${META('A')}\n\n\`\`\`js\n1\n\`\`\`\n`);
    expect(errors).toEqual(['line 4: the content block must be marked ```json, not "js"']);
  });

  it('reports missing content', () => {
    expect(errorsOf(`# A\n${META('A')}\n\n# B\n${META('B')}\nb\n`)).toEqual([
      'line 1: entry "A" has no content; write it as text or as a ```json block under its comment',
    ]);
    expect(
      errorsOf(
        `# A\n${META('A')}\n> - **user** (similarity 0.5): x <!-- chunk {${CHUNK_META}} -->\n`,
      ),
    ).toEqual([
      'line 3: entry "A" has no content; write it as text or as a ```json block under its comment',
    ]);
  });

  it('reports content over 32 KB', () => {
    const big = 'x'.repeat(33 * 1024);
    const errors = errorsOf(`# A\n${META('A')}\n${big}\n`);
    expect(errors).toEqual([
      expect.stringMatching(
        /^line 1: the content of entry "A" is 33794 bytes as JSON; at most 32768/,
      ),
    ]);
    const multibyte = '日'.repeat(11 * 1024); // 33 KB in UTF-8, 11 K characters
    expect(errorsOf(`# A\n${META('A')}\n${multibyte}\n`)[0]).toMatch(
      /bytes as JSON; at most 32768/,
    );
  });

  it('reports text mixed with a code block, and text after the chunks', () => {
    expect(errorsOf(`# A\n${META('A')}\ntext\n\`\`\`json\n1\n\`\`\`\n`)).toEqual([
      'line 4: entry "A" has text and then a code block; content is either text or one ```json block',
    ]);
    expect(errorsOf(`# A\n${META('A')}\n\`\`\`json\n1\n\`\`\`\nmore text\n`)[0]).toMatch(
      /^line 6: unexpected text after the content of entry "A"/,
    );
    expect(
      errorsOf(
        `# A\n${META('A')}\nt\n> - **user** (similarity 0.5): x <!-- chunk {${CHUNK_META}} -->\nafter\n`,
      )[0],
    ).toMatch(/^line 5: unexpected text after the context chunks of entry "A"/);
  });

  it.each([
    [
      'a bad role',
      CHUNK_META.replace('"user"', '"robot"'),
      /^line 4: chunk "role" must be one of user, assistant, system, tool, got "robot"/,
    ],
    [
      'a missing turn id',
      CHUNK_META.replace('"turn_id":1,', ''),
      /^line 4: chunk "turn_id" must be a whole number from 0 to 9007199254740991, got undefined/,
    ],
    [
      'a negative turn id',
      CHUNK_META.replace('"turn_id":1', '"turn_id":-1'),
      /^line 4: chunk "turn_id" must be a whole number from 0 to \d+, got -1/,
    ],
    [
      'a fractional sentence id',
      CHUNK_META.replace('"sentence_id":0', '"sentence_id":1.5'),
      /^line 4: chunk "sentence_id" must be a whole number from 0 to \d+, got 1.5/,
    ],
    [
      'a negative token count',
      CHUNK_META.replace('"tokenCount":3', '"tokenCount":-5'),
      /^line 4: chunk "tokenCount" must be a whole number from 0 to \d+, got -5/,
    ],
    [
      'a non-finite similarity',
      CHUNK_META.replace('0.5', 'null'),
      /^line 4: chunk "similarity" must be a finite number, got null/,
    ],
    [
      'a string token count',
      CHUNK_META.replace('"tokenCount":3', '"tokenCount":"3"'),
      /^line 4: chunk "tokenCount" must be a whole number from 0 to \d+, got "3"/,
    ],
    [
      'a non-string text',
      CHUNK_META + ',"text":5',
      /^line 4: chunk "text" must be a string, got 5/,
    ],
    ['broken chunk JSON', CHUNK_META + ',', /^line 4: the chunk comment is not a JSON object: /],
  ])('reports a chunk with %s', (_name, meta, pattern) => {
    const errors = errorsOf(
      `# A\n${META('A')}\ntext\n> - **user** (similarity 0.5): x <!-- chunk {${meta}} -->\n`,
    );
    expect(
      errors.some((e) => pattern.test(e)),
      errors.join('\n'),
    ).toBe(true);
  });

  it('reports malformed chunk lines', () => {
    expect(errorsOf(`# A\n${META('A')}\ntext\n> just a quote\n`)[0]).toMatch(
      /^line 4: a context chunk line must look like/,
    );
    expect(
      errorsOf(`# A\n${META('A')}\ntext\n> - **user** (similarity 0.5): no comment\n`)[0],
    ).toMatch(/^line 4: .*the <!-- chunk \{…\} --> comment at the end is missing or broken/);
    expect(
      errorsOf(`# A\n${META('A')}\ntext\n> - no prefix <!-- chunk {${CHUNK_META}} -->\n`)[0],
    ).toMatch(/^line 4: .*the chunk text is missing/);
  });

  it('reports a metadata comment that is not under a heading', () => {
    expect(errorsOf(`${META('A')}\n\n# B\n${META('B')}\nb\n`)).toEqual([
      'line 1: this structured-memory comment is not right under a heading',
    ]);
    expect(errorsOf(`# B\n${META('B')}\nb\n${META('C')}\n`)).toEqual([
      'line 4: this structured-memory comment is not right under a heading',
    ]);
  });

  it('reports text under a heading that is not an entry', () => {
    const md = '# A\n<!-- structured-memory-heading {"path":"A"} -->\nlost text\n';
    expect(errorsOf(md)).toEqual([
      expect.stringMatching(/^line 3: text under heading "A", which is not an entry/),
    ]);
  });

  it('reports a file from a newer format', () => {
    const md = good.replace('{"format":2', '{"format":3');
    expect(errorsOf(md)).toEqual([
      expect.stringMatching(/^line 3: this file uses export format 3/),
    ]);
  });

  it('refuses an export cut short, wherever it stops; one of format 1 needs no end line', () => {
    const long = 'First line of a long note.\n' + 'More of it. '.repeat(200) + '\nLast line.';
    const md = entriesToMarkdown(
      [entry('Notes/Long', long, [chunk('said')]), entry('Notes/Short', 'fine', [])],
      { exported: T0 },
    );
    expect(md.trimEnd().endsWith('<!-- structured-memory-end -->')).toBe(true);
    const whole = parseMarkdown(md);
    expect(whole.ok && whole.entries.map((e) => e.content)).toEqual([long, 'fine']);
    const lines = md.split('\n');
    // Cut at every line after the preamble, and inside the long line.
    const cuts = [
      ...lines.slice(4, -2).map((_, i) => lines.slice(0, i + 5).join('\n')),
      md.slice(0, md.indexOf('More of it.') + 500),
    ];
    for (const cut of cuts) {
      const r = parseMarkdown(cut);
      expect(r.ok, cut.slice(-60)).toBe(false);
      if (!r.ok) expect(r.errors.join(' ')).toMatch(/the file ends early/);
    }
    // An export written before the end line existed (format 1) reads as it did.
    const old = md
      .replace('{"format":2', '{"format":1')
      .replace('<!-- structured-memory-end -->\n', '');
    const r = parseMarkdown(old);
    expect(r.ok && r.entries.map((e) => e.content)).toEqual([long, 'fine']);
  });

  it('reports a file with no entries at all', () => {
    expect(errorsOf('# Shopping list\n\n- eggs\n- milk\n')).toEqual([
      expect.stringMatching(/^line 1: no Structured Memory entries were found/),
    ]);
    expect(errorsOf('')[0]).toMatch(/no Structured Memory entries/);
  });

  it('collects several errors and caps them', () => {
    const many = Array.from({ length: 80 }, (_, i) => `# H${i}\n${META(`A//${i}`)}\nx\n`).join('');
    const errors = errorsOf(many);
    expect(errors).toHaveLength(51);
    expect(errors[0]).toMatch(/^line 2: invalid path/);
    expect(errors[50]).toBe('…and 30 more problem(s)');
  });

  it('never throws on garbage', () => {
    const pieces = fc.constantFrom(
      '# ',
      '###### ',
      '\n',
      '\r\n',
      '\r',
      '> - ',
      '**user** (similarity 0.5): ',
      '<!-- chunk {',
      '<!-- structured-memory {',
      '<!-- structured-memory-heading {"path":"A"} -->\n',
      META('A') + '\n',
      META('A/B') + '\n',
      '"path":"A"',
      '"version":1',
      '} -->',
      '```json\n',
      '```\n',
      '~~~\n',
      '````',
      '{"a":1}',
      'text',
      ' ',
      '\t',
      '\ufeff',
      '\ud800',
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.array(pieces, { maxLength: 40 }).map((p) => p.join('')),
          fc
            .array(fc.oneof(pieces, fc.string({ maxLength: 5 })), { maxLength: 30 })
            .map((p) => p.join('')),
        ),
        (text) => {
          const result = parseMarkdown(text);
          expect(typeof result.ok).toBe('boolean');
          if (!result.ok) {
            expect(result.errors.length).toBeGreaterThan(0);
            for (const e of result.errors) expect(typeof e).toBe('string');
          }
        },
      ),
      { numRuns: 1000 },
    );
    // Mutations of a real export: drop, duplicate or swap lines.
    const lines = entriesToMarkdown(
      [entry('A', { x: 1 }, [chunk('hi\nthere')]), entry('A/B', 'text'), entry('A/C/D', '```')],
      { exported: T0 },
    ).split('\n');
    fc.assert(
      fc.property(fc.array(fc.nat(lines.length - 1), { maxLength: lines.length * 2 }), (picks) => {
        expect(() => parseMarkdown(picks.map((i) => lines[i]).join('\n'))).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });

  it('is quick on pathological lines', () => {
    const start = performance.now();
    parseMarkdown(
      '# A\n' + META('A') + '\nx\n> - ' + ' '.repeat(200_000) + '<!--' + ' x'.repeat(100_000),
    );
    parseMarkdown(' '.repeat(300_000) + 'x\n' + '\t'.repeat(300_000) + '#');
    expect(performance.now() - start).toBeLessThan(2000);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the Markdown reads as a person expects', () => {
  const md = entriesToMarkdown(
    [
      entry('HaloWeave/Goals/Phase1', 'Ship phase one by March.\n\nThen polish.', [
        chunk('We need phase one by March.', { similarity: 0.8312 }),
        chunk('Agreed, March it is.', { role: 'assistant', similarity: 0.61 }),
      ]),
      entry('HaloWeave/Budget', { total: 1200, currency: 'EUR' }),
      entry('HaloWeave', 'A weaving project.'),
    ],
    { exported: T0 },
  );
  const lines = md.split('\n');

  it('starts with a title and a short preamble', () => {
    expect(lines[0]).toBe('# Structured Memory export');
    expect(md).toMatch(/\nExported 2025-03-04T05:06:07.089Z: 3 entries\. /);
    expect(entriesToMarkdown([], { title: 'My\nnotes', exported: T0 }).split('\n')[0]).toBe(
      '# My notes',
    );
  });

  it('has one heading per entry, level = depth, parents first', () => {
    const headings = lines.filter((l) => /^#{1,6} /.test(l)).slice(1);
    expect(headings).toEqual(['# HaloWeave', '## Budget', '## Goals', '### Phase1']);
  });

  it('puts the metadata comment right under each entry heading', () => {
    const i = lines.indexOf('### Phase1');
    expect(lines[i + 1]).toBe(
      '<!-- structured-memory {"path":"HaloWeave/Goals/Phase1","version":3,' +
        '"created":"2025-03-04T05:06:07.089Z","modified":"2025-03-05T10:11:12.345Z",' +
        '"accessed":"2025-03-06T23:59:59.999Z"} -->',
    );
    expect(lines[lines.indexOf('## Goals') + 1]).toBe(
      '<!-- structured-memory-heading {"path":"HaloWeave/Goals"} -->',
    );
  });

  it('writes text content as paragraphs and other content as a json block', () => {
    const i = lines.indexOf('### Phase1');
    expect(lines.slice(i + 2, i + 7)).toEqual([
      '',
      'Ship phase one by March.',
      '',
      'Then polish.',
      '',
    ]);
    const b = lines.indexOf('## Budget');
    expect(lines.slice(b + 2, b + 8)).toEqual([
      '',
      '```json',
      '{',
      '  "total": 1200,',
      '  "currency": "EUR"',
      '}',
    ]);
  });

  it('lists context chunks as a quote list', () => {
    const quoted = lines.filter((l) => l.startsWith('>'));
    expect(quoted).toHaveLength(2);
    expect(quoted[0]).toMatch(
      /^> - \*\*user\*\* \(similarity 0\.83\): We need phase one by March\. <!-- chunk \{/,
    );
    expect(quoted[1]).toMatch(
      /^> - \*\*assistant\*\* \(similarity 0\.61\): Agreed, March it is\. <!-- chunk \{/,
    );
  });

  it('caps heading levels at 6 and escapes markup in heading text', () => {
    const deep = entriesToMarkdown([entry('A/B/C/D/E/F/G/H', 'x'), entry('X/<b>*y*', 'z')], {
      exported: T0,
    });
    expect(deep).toContain('\n###### F / G / H\n');
    expect(deep).toContain('\n## \\<b\\>\\*y\\*\n');
  });

  it('cannot be broken out of by content or paths', () => {
    const evil = entriesToMarkdown(
      [entry('Evil/--> <!--', '--> <!-- structured-memory {"path":"X"} -->', [chunk('--> x')])],
      { exported: T0 },
    );
    // Outside the fenced JSON block, every comment opens once and closes at the end of its line
    // (the export marker, the heading's, the entry's, its chunk, the end line).
    const comments = evil.split('\n').filter((l) => l.startsWith('<!--') || l.startsWith('>'));
    expect(comments).toHaveLength(5);
    for (const line of comments) {
      expect(line.indexOf('-->')).toBe(line.length - 3);
      expect(line.indexOf('<!--')).toBe(line.lastIndexOf('<!--'));
    }
  });
});
