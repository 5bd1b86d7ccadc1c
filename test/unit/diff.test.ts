import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyMergePatch,
  contentText,
  createMergePatch,
  diffContent,
  diffLines,
  diffStats,
  jsonEqual,
  MAX_DIFF_CELLS,
  planSave,
  previewText,
  type DiffLine,
  type JsonObject,
} from '../../src/ui/diff';
import type { JsonValue } from '../../src/memory/types';
import { mergePatch } from '../../src/memory/validate';

const side = (lines: DiffLine[], keep: '-' | '+') =>
  lines.filter((l) => l.op === ' ' || l.op === keep).map((l) => l.text);
const show = (lines: DiffLine[]) => lines.map((l) => l.op + l.text);

describe('diffLines', () => {
  it('keeps common lines and marks the rest', () => {
    expect(show(diffLines(['a', 'b', 'c'], ['a', 'x', 'c']))).toEqual([' a', '-b', '+x', ' c']);
    expect(show(diffLines([], ['a']))).toEqual(['+a']);
    expect(show(diffLines(['a'], []))).toEqual(['-a']);
    expect(show(diffLines(['a', 'b'], ['a', 'b']))).toEqual([' a', ' b']);
  });

  it('finds a longest common subsequence, not just a common head and tail', () => {
    const out = diffLines(['x', 'a', 'b', 'c', 'y'], ['a', 'q', 'b', 'c', 'z']);
    expect(out.filter((l) => l.op === ' ').map((l) => l.text)).toEqual(['a', 'b', 'c']);
    expect(diffStats(out)).toEqual({ added: 2, removed: 2 });
  });

  it('rebuilds both sides (property)', () => {
    const lines = fc.array(fc.constantFrom('a', 'b', 'c', 'd', ''), { maxLength: 30 });
    fc.assert(
      fc.property(lines, lines, (a, b) => {
        const out = diffLines(a, b);
        expect(side(out, '-')).toEqual(a);
        expect(side(out, '+')).toEqual(b);
      }),
    );
  });

  it('falls back to remove-then-add past the size cap, still correct', () => {
    const n = Math.ceil(Math.sqrt(MAX_DIFF_CELLS)) + 2;
    const a = Array.from({ length: n }, (_, i) => `a${i}`);
    const b = Array.from({ length: n }, (_, i) => `b${i}`);
    const out = diffLines(['h', ...a, 't'], ['h', ...b, 't']);
    expect(out[0]).toEqual({ op: ' ', text: 'h' });
    expect(out.at(-1)).toEqual({ op: ' ', text: 't' });
    expect(side(out, '-')).toEqual(['h', ...a, 't']);
    expect(side(out, '+')).toEqual(['h', ...b, 't']);
  });
});

describe('diffContent', () => {
  it('compares text as text and anything else as pretty JSON', () => {
    expect(contentText('line 1\nline 2')).toBe('line 1\nline 2');
    expect(contentText({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(show(diffContent({ a: 1, b: 2 }, { a: 1, b: 3 }))).toEqual([
      ' {',
      '   "a": 1,',
      '-  "b": 2',
      '+  "b": 3',
      ' }',
    ]);
  });
});

describe('merge patches', () => {
  it('removes keys with null and recurses into objects', () => {
    const from: JsonObject = { a: 1, b: { c: 2, d: 3 }, e: [1, 2] };
    const to: JsonObject = { a: 1, b: { c: 5 }, e: [1], f: 'new' };
    const patch = createMergePatch(from, to);
    expect(patch).toEqual({ b: { c: 5, d: null }, e: [1], f: 'new' });
    expect(applyMergePatch(from, patch!)).toEqual(to);
  });

  it('gives up when the target holds a null a merge patch cannot write', () => {
    expect(createMergePatch({ a: 1 }, { a: null })).toBeUndefined();
    expect(createMergePatch({}, { a: { b: null } })).toBeUndefined();
    // Nulls inside arrays are fine: arrays are replaced whole.
    expect(createMergePatch({}, { a: [null] })).toEqual({ a: [null] });
  });

  it('is empty for equal objects, whatever the key order', () => {
    expect(createMergePatch({ a: 1, b: { c: 2 } }, { b: { c: 2 }, a: 1 })).toEqual({});
    expect(jsonEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual([1], { 0: 1 })).toBe(false);
  });

  it('round-trips any pair of objects without nulls (property)', () => {
    const leaf = fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.boolean());
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), tie('value'), { maxKeys: 4 }),
      ),
    }));
    const obj = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), value, { maxKeys: 4 });
    fc.assert(
      fc.property(obj, obj, (from, to) => {
        const patch = createMergePatch(from as JsonObject, to as JsonObject);
        expect(patch).toBeDefined();
        expect(jsonEqual(applyMergePatch(from as JsonValue, patch!), to as JsonValue)).toBe(true);
      }),
    );
  });
});

describe('planSave', () => {
  it('refuses JSON that does not parse, with the reason', () => {
    const plan = planSave({ a: 1 }, '{ "a": ', 'json');
    expect(plan.kind).toBe('invalid');
    expect(plan.kind === 'invalid' && plan.message).toMatch(/not valid JSON.*switch to Text/);
  });

  it('patches object edits so the context chunks stay', () => {
    expect(planSave({ a: 1, b: 2 }, '{"a": 1, "c": 3}', 'json')).toEqual({
      kind: 'patch',
      patch: { b: null, c: 3 },
    });
  });

  it('replaces whole when a patch cannot say it', () => {
    expect(planSave({ a: 1 }, '{"a": null}', 'json')).toEqual({
      kind: 'replace',
      value: { a: null },
    });
    expect(planSave({ a: 1 }, '[1, 2]', 'json')).toEqual({ kind: 'replace', value: [1, 2] });
    expect(planSave('old', 'new text', 'text')).toEqual({ kind: 'replace', value: 'new text' });
    // Text mode saves the characters as a string, even if they look like JSON.
    expect(planSave({ a: 1 }, '{"a": 1}', 'text')).toEqual({ kind: 'replace', value: '{"a": 1}' });
  });

  it('notices when nothing changed', () => {
    expect(planSave({ a: 1, b: [2] }, '{ "b": [2], "a": 1 }', 'json')).toEqual({
      kind: 'unchanged',
    });
    expect(planSave('same', 'same', 'text')).toEqual({ kind: 'unchanged' });
  });
});

describe('keys named __proto__ are ordinary keys (issue 10)', () => {
  const OLD = '{"__proto__":{"x":1},"b":1}';
  /** A JSON value as JSON.parse builds it (so `__proto__` is an own key). */
  const parse = (json: string) => JSON.parse(json) as JsonValue;
  /** JSON text, own keys in order, so a lost or moved `__proto__` key shows. */
  const text = (v: unknown) => JSON.stringify(v);
  /** What the engine stores for a plan: the patch merged as updateMemory does, or the value. */
  const saved = (old: JsonValue, draft: string) => {
    const plan = planSave(old, draft, 'json');
    // Comlink carries the patch to the worker by structured clone.
    if (plan.kind === 'patch') return mergePatch(old, structuredClone(plan.patch));
    if (plan.kind === 'replace') return plan.value;
    return plan.kind === 'unchanged' ? old : undefined;
  };

  it('shows the key in the edit box', () => {
    expect(contentText(parse(OLD))).toBe('{\n  "__proto__": {\n    "x": 1\n  },\n  "b": 1\n}');
  });

  it.each([
    ['changes another field', '{"__proto__":{"x":1},"b":2}'],
    ['changes a field inside __proto__', '{"__proto__":{"x":2},"b":1}'],
    ['adds a field inside __proto__', '{"__proto__":{"x":1,"y":[1]},"b":1}'],
    ['replaces __proto__ with a non-object', '{"__proto__":"text","b":1}'],
    ['removes __proto__', '{"b":1}'],
  ])('an edit that %s is a merge patch that round-trips exactly', (_what, draft) => {
    const old = parse(OLD);
    const plan = planSave(old, draft, 'json');
    expect(plan.kind).toBe('patch');
    expect(text(saved(old, draft))).toBe(draft);
    // Nothing leaked into a prototype on the way.
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('adding a __proto__ key to an object is a merge patch too', () => {
    const plan = planSave(parse('{"b":1}'), OLD, 'json');
    expect(plan.kind === 'patch' && text(plan.patch)).toBe('{"__proto__":{"x":1}}');
    // A merge patch adds keys after the ones kept (key order is not content: see jsonEqual).
    expect(text(saved(parse('{"b":1}'), OLD))).toBe('{"b":1,"__proto__":{"x":1}}');
  });

  it('the patch holds __proto__ as an own key, and applyMergePatch keeps it', () => {
    const plan = planSave(parse(OLD), '{"b":1}', 'json');
    expect(plan.kind === 'patch' && Object.hasOwn(plan.patch, '__proto__')).toBe(true);
    expect(plan.kind === 'patch' && Object.getPrototypeOf(plan.patch)).toBe(Object.prototype);
    expect(text(applyMergePatch(parse('{"b":1}'), parse('{"__proto__":{"x":1}}')))).toBe(
      '{"b":1,"__proto__":{"x":1}}',
    );
    const from = parse('{"__proto__":{"x":1},"b":{"__proto__":2}}') as JsonObject;
    const to = parse('{"__proto__":{"x":1,"y":2},"b":{"c":3}}') as JsonObject;
    const patch = createMergePatch(from, to);
    expect(text(patch)).toBe('{"__proto__":{"y":2},"b":{"__proto__":null,"c":3}}');
    expect(text(applyMergePatch(from, patch!))).toBe(text(to));
  });

  it('an unchanged __proto__ edit is unchanged, and a different one is not', () => {
    expect(planSave(parse(OLD), '{"b":1,"__proto__":{"x":1}}', 'json').kind).toBe('unchanged');
    expect(jsonEqual(parse(OLD), parse('{"b":1}'))).toBe(false);
    expect(jsonEqual(parse('{"b":1}'), parse(OLD))).toBe(false);
  });

  it('round-trips any edit of objects keyed __proto__ (property)', () => {
    const key = fc.constantFrom('__proto__', 'constructor', 'toString', 'a');
    const json: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.oneof(fc.integer(), fc.string({ maxLength: 3 })).map((x) => JSON.stringify(x)),
        fc.array(tie('v'), { maxLength: 2 }).map((xs) => `[${xs.join(',')}]`),
        fc
          .uniqueArray(fc.tuple(key, tie('v')), { selector: ([k]) => k, maxLength: 3 })
          .map((kv) => `{${kv.map(([k, x]) => `${JSON.stringify(k)}:${x}`).join(',')}}`),
      ),
    })).v;
    const obj = fc
      .uniqueArray(fc.tuple(key, json), { selector: ([k]) => k, maxLength: 4 })
      .map((kv) => `{${kv.map(([k, x]) => `${JSON.stringify(k)}:${x}`).join(',')}}`);
    fc.assert(
      fc.property(obj, obj, (from, to) => {
        const plan = planSave(parse(from), to, 'json');
        expect(plan.kind).not.toBe('invalid');
        expect(plan.kind).not.toBe('replace');
        expect(jsonEqual(saved(parse(from), to) as JsonValue, parse(to))).toBe(true);
      }),
      { seed: 10 },
    );
  });
});

describe('previewText', () => {
  it("shows a lorebook entry's text, text as it is, and anything else as compact JSON", () => {
    expect(previewText({ content: 'Eldoria has seven bridges.', keys: ['Eldoria'] })).toBe(
      'Eldoria has seven bridges.',
    );
    expect(previewText('plain words')).toBe('plain words');
    expect(previewText({ content: 3, keys: [] })).toBe('{"content":3,"keys":[]}');
    expect(previewText({ city: 'Lisbon' })).toBe('{"city":"Lisbon"}');
  });
});
