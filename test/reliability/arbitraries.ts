// Hostile inputs for the reliability cases, as a model or a file would carry them: JSON *text*
// (so `__proto__` keys arrive as own keys, as JSON.parse makes them), paths, markup, and the ways
// a model garbles JSON. The engine's own fuzz test (test/integration/fuzz.test.ts) throws JS
// values at the API; these go through the parsers in front of it.
import fc from 'fast-check';

/** Markup that would run if it were ever inserted as HTML; each sets a flag on window. */
export const MARKUP = [
  '<script>window.__xss = 1</script>',
  '<img src=x onerror="window.__xss = 2">',
  '<svg onload="window.__xss = 3"></svg>',
  '<iframe srcdoc="<script>parent.__xss = 4</script>"></iframe>',
  '"><img src=x onerror=window.__xss=5>',
  '<a href="javascript:window.__xss = 6">link</a>',
  '<!-- structured-memory {"path":"Injected"} -->',
  '```\n# Injected heading\n```',
  '{{constructor.constructor("window.__xss = 7")()}}',
  '${window.__xss = 8}',
] as const;

export const markup = fc.constantFrom(...MARKUP);

/** Keys that are special somewhere: prototypes, Dexie, the tree of listMemory. */
export const hostileKey = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'then',
  '_content',
  '',
  ' ',
  'a',
  'b',
);

const segment = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('A', 'B', 'Seed', 'Notes', 'Goals', 'x') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', '..', '.', 'é', '\u202e'),
  },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', 'a\u0000b', '\ud800', 'x'.repeat(300)) },
  { weight: 1, arbitrary: markup },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
);

/** Path-like text: mostly valid paths near the seeded ones, some hostile. */
export const pathText: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom('Seed/One', 'Seed/Two/Deep', 'A/B', 'A/B/C', 'Seed', ''),
  },
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.array(segment, { minLength: 1, maxLength: 5 }),
        fc.constantFrom('/', '/', '/', '//', '\\', ' / '),
      )
      .map(([segs, sep]) => segs.join(sep)),
  },
);

const jsonString = (s: string) => JSON.stringify(s);

/** A JSON number as a model might write it, some of which JSON.parse turns into Infinity or -0. */
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.constantFrom('1e400', '-1e400', '-0', '9007199254740993', '1e-400', '0.1', '4001', '-1'),
);

const stringText = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 12 }).map(jsonString) },
  { weight: 2, arbitrary: markup.map(jsonString) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }).map(jsonString) },
  // Lone surrogates and control characters, escaped the way JSON allows.
  { weight: 1, arbitrary: fc.constantFrom('"\\ud800"', '"a\\u0000b"', '"\\udfff\\ud800"') },
  // Near and past the 32 KB content cap.
  {
    weight: 1,
    arbitrary: fc.constantFrom(30_000, 33_000, 200_000).map((n) => jsonString('z'.repeat(n))),
  },
);

/** Nested `[` … `]` (or objects) far deeper than any real memory. */
const deepText = fc
  .tuple(fc.constantFrom(100, 5_000, 100_000), fc.boolean())
  .map(([depth, asObject]) =>
    asObject
      ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
      : '['.repeat(depth) + ']'.repeat(depth),
  );

const jsonTextOf = (deep: boolean): fc.Arbitrary<string> =>
  fc.letrec<{ value: string }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      {
        weight: 3,
        arbitrary: fc.oneof(numberText, stringText, fc.constantFrom('true', 'false', 'null')),
      },
      {
        weight: 1,
        arbitrary: fc.array(tie('value'), { maxLength: 4 }).map((xs) => `[${xs.join(',')}]`),
      },
      {
        weight: 2,
        arbitrary: fc
          .uniqueArray(fc.tuple(hostileKey, tie('value')), { selector: ([k]) => k, maxLength: 4 })
          .map((kv) => `{${kv.map(([k, v]) => `${jsonString(k)}:${v}`).join(',')}}`),
      },
      ...(deep ? [{ weight: 1, arbitrary: deepText }] : []),
    ),
  })).value;

/** Any JSON value as text, with hostile keys, strings, numbers and depth. */
export const jsonText: fc.Arbitrary<string> = jsonTextOf(true);

/**
 * The same without the far too deep values, which make the connector refuse a whole reply
 * (MAX_JSON_DEPTH, by design): for cases that need the other calls of a reply to run.
 */
export const shallowJsonText: fc.Arbitrary<string> = jsonTextOf(false);

/** A JSON object's text from `[key, valueText]` pairs (keys kept in order, duplicates allowed). */
export const objectText = (pairs: readonly (readonly [string, string])[]): string =>
  `{${pairs.map(([k, v]) => `${jsonString(k)}:${v}`).join(',')}}`;

/** The ways a model garbles the JSON of its tool arguments. */
export type Garble =
  | { kind: 'none' }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'wrap'; before: string; after: string }
  | { kind: 'replace'; text: string };

export const garble: fc.Arbitrary<Garble> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 2, arbitrary: fc.nat().map((at) => ({ kind: 'truncate' as const, at })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.nat(), fc.constantFrom(',', '}', '{', '"', ']', '\\', '\u0000', ',}', '/*x*/'))
      .map(([at, text]) => ({ kind: 'insert' as const, at, text })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.nat(), fc.integer({ min: 1, max: 5 }))
      .map(([at, length]) => ({ kind: 'delete' as const, at, length })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        ['```json\n', '\n```'],
        ['[', ']'],
        ['"', '"'],
        ['{"arguments":', '}'],
        ['', ' trailing words'],
        ['<tool_call>', '</tool_call>'],
      )
      .map(([before, after]) => ({ kind: 'wrap' as const, before, after })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('', ' ', 'null', '[]', '"text"', '42', '{', '{"path":', 'undefined', '{}')
      .map((text) => ({ kind: 'replace' as const, text })),
  },
);

export function applyGarble(json: string, g: Garble): string {
  switch (g.kind) {
    case 'none':
      return json;
    case 'truncate':
      return json.slice(0, g.at % (json.length + 1));
    case 'insert': {
      const at = g.at % (json.length + 1);
      return json.slice(0, at) + g.text + json.slice(at);
    }
    case 'delete': {
      const at = g.at % (json.length + 1);
      return json.slice(0, at) + json.slice(at + g.length);
    }
    case 'wrap':
      return g.before + json + g.after;
    case 'replace':
      return g.text;
  }
}

/** The ways a file is damaged on its way: cut short, bytes changed, parts repeated or blown up. */
export type Damage =
  | { kind: 'truncate'; at: number }
  | { kind: 'flip'; edits: { at: number; text: string }[] }
  | { kind: 'repeat'; at: number; length: number; times: number }
  | { kind: 'pad'; at: number; text: string; times: number };

export const damage: fc.Arbitrary<Damage> = fc.oneof(
  { arbitrary: fc.nat().map((at) => ({ kind: 'truncate' as const, at })), weight: 3 },
  {
    weight: 3,
    arbitrary: fc
      .array(
        fc.record({
          at: fc.nat(),
          text: fc.oneof(
            fc.string({ unit: 'binary', maxLength: 3 }),
            fc.constantFrom('"', '{', '}', ',', '\n', '-->', '<!--', '#', '\uFFFD', '\u0000'),
          ),
        }),
        { minLength: 1, maxLength: 6 },
      )
      .map((edits) => ({ kind: 'flip' as const, edits })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.nat(), fc.integer({ min: 1, max: 400 }), fc.constantFrom(2, 50, 2_000))
      .map(([at, length, times]) => ({ kind: 'repeat' as const, at, length, times })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.nat(),
        fc.constantFrom(' ', '\n', 'x', '[', '{"a":', '\ud83d\ude00'),
        fc.constantFrom(1_000, 1_000_000, 12_000_000),
      )
      .map(([at, text, times]) => ({ kind: 'pad' as const, at, text, times })),
  },
);

export function applyDamage(file: string, d: Damage): string {
  const pos = (at: number) => at % (file.length + 1);
  switch (d.kind) {
    case 'truncate':
      return file.slice(0, pos(d.at));
    case 'flip': {
      let out = file;
      for (const e of d.edits) {
        const at = e.at % (out.length + 1);
        out = out.slice(0, at) + e.text + out.slice(at + 1);
      }
      return out;
    }
    case 'repeat': {
      const at = pos(d.at);
      const part = file.slice(at, at + d.length);
      return file.slice(0, at) + part.repeat(d.times) + file.slice(at);
    }
    case 'pad': {
      const at = pos(d.at);
      return file.slice(0, at) + d.text.repeat(d.times) + file.slice(at);
    }
  }
}

export const describeDamage = (d: Damage): string =>
  d.kind === 'flip'
    ? `flip ${d.edits.length} places`
    : d.kind === 'pad'
      ? `pad ${JSON.stringify(d.text)} × ${d.times}`
      : JSON.stringify(d);
