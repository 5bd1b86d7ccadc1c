// Property test: any junk as any argument of any tool resolves to a result with a status, and a
// result that is an error (or NOT_FOUND) leaves the database exactly as it was.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryApi } from '../../src/memory/types';
import { closeAll, ok, openTestMemory, safeJson, sharedEmbedder, snapshotDb } from './helpers';

const cyclic = (): unknown => {
  const o: Record<string, unknown> = { a: 1, list: [] };
  (o.list as unknown[]).push(o);
  return o;
};
const deepArray = (depth: number): unknown => {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};
const deepObject = (depth: number): unknown => {
  let v: unknown = { leaf: true };
  for (let i = 0; i < depth; i++) v = { next: v };
  return v;
};

/** Values a confused model (or a hostile caller) might pass anywhere. */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withNullPrototype: true,
    withSparseArray: true,
    withTypedArray: true,
    withUnicodeString: true,
    maxDepth: 4,
  }),
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(NaN, Infinity, -Infinity, -0, 0, 1, 4000, 4001, -1, 0.5, 1.5, 1e300),
  fc.constantFrom(null, undefined, true, false, '', '/', '.', '..', 'yes'),
  fc.constant(null).map(() => cyclic()),
  fc.constant(null).map(() => Symbol('junk')),
  fc.constant(null).map(() => () => 'a function'),
  fc.constant(null).map(() => BigInt(7)),
  fc.constant(null).map(() => 'h'.repeat(100_000)),
  fc.constant(null).map(() => ({ huge: 'j'.repeat(100_000) })),
  fc.constant(null).map(() => deepArray(2_000)),
  fc.constant(null).map(() => deepArray(200_000)),
  fc.constant(null).map(() => deepObject(5_000)),
  fc.constant(null).map(() => ({
    get boom(): never {
      throw new Error('getter');
    },
  })),
  fc.constant(null).map(() => ({
    toJSON(): never {
      throw new Error('toJSON');
    },
  })),
);

/** Path-like strings, mostly valid, so that some calls reach the store. */
const pathish: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('A', 'A/B', 'A/B/C', 'Seed/One', 'Seed', 'Seed/Two/Deep', ' /A/ B ', 'A//B', ''),
  fc
    .array(fc.oneof(fc.constantFrom('A', 'B', 'Seed', 'x', '..', ' ', 'é'), fc.string()), {
      minLength: 1,
      maxLength: 14,
    })
    .map((segs) => segs.join('/')),
  junk,
);

const arg = fc.oneof({ weight: 1, arbitrary: pathish }, { weight: 2, arbitrary: junk });

type Call = { tool: string; run: (m: MemoryApi) => Promise<unknown> };

const call: fc.Arbitrary<Call> = fc.oneof(
  fc.tuple(pathish, arg, arg, arg).map(([p, c, t, o]) => ({
    tool: `saveMemory(${safeJson(p)}, ${safeJson(c)}, ${safeJson(t)}, ${safeJson(o)})`,
    run: (m: MemoryApi) => m.saveMemory(p, c, t, o as never),
  })),
  fc.tuple(pathish).map(([p]) => ({
    tool: `queryMemory(${safeJson(p)})`,
    run: (m: MemoryApi) => m.queryMemory(p),
  })),
  fc.tuple(pathish, arg, arg, arg).map(([p, q, b, o]) => ({
    tool: `queryMemoryHeading(${safeJson(p)}, ${safeJson(q)}, ${safeJson(b)}, ${safeJson(o)})`,
    run: (m: MemoryApi) => m.queryMemoryHeading(p, q, b, o as never),
  })),
  fc.tuple(pathish, arg).map(([p, o]) => ({
    tool: `listMemory(${safeJson(p)}, ${safeJson(o)})`,
    run: (m: MemoryApi) => m.listMemory(p, o as never),
  })),
  fc.tuple(pathish, arg).map(([p, r]) => ({
    tool: `deleteMemory(${safeJson(p)}, ${safeJson(r)})`,
    run: (m: MemoryApi) => m.deleteMemory(p, r),
  })),
  fc.tuple(pathish, arg).map(([p, patch]) => ({
    tool: `updateMemory(${safeJson(p)}, ${safeJson(patch)})`,
    run: (m: MemoryApi) => m.updateMemory(p, patch),
  })),
  fc.tuple(pathish, pathish).map(([from, to]) => ({
    tool: `moveMemory(${safeJson(from)}, ${safeJson(to)})`,
    run: (m: MemoryApi) => m.moveMemory(from, to),
  })),
  fc.tuple(pathish).map(([p]) => ({
    tool: `getHistory(${safeJson(p)})`,
    run: (m: MemoryApi) => m.getHistory(p),
  })),
  fc.tuple(arg).map(([id]) => ({
    tool: `restoreMemory(${safeJson(id)})`,
    run: (m: MemoryApi) => m.restoreMemory(id),
  })),
  fc.tuple(arg).map(([text]) => ({
    tool: `importMarkdown(${safeJson(text)})`,
    run: (m: MemoryApi) => m.importMarkdown(text),
  })),
);

let mem: MemoryApi;
let name: string;

beforeAll(async () => {
  await sharedEmbedder().ready();
  ({ mem, name } = openTestMemory());
  ok(
    await mem.recordTurn({
      conversationId: 1,
      role: 'user',
      text: 'The seed entries describe a plan. Each one has a short note.',
    }),
  );
  ok(await mem.saveMemory('Seed/One', { note: 'first seed', tags: ['a', 'b'] }));
  ok(await mem.saveMemory('Seed/Two/Deep', 'a deep seed'));
  ok(await mem.saveMemory('A/B', { x: 1 }));
  ok(await mem.saveMemory('A/B/C', [1, 2, 3]));
});
afterAll(closeAll);

describe('fuzz: junk arguments for every tool', () => {
  it('never rejects, always returns a status, and errors leave the store unchanged', async () => {
    const seen: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(call, async ({ tool, run }) => {
        const before = await snapshotDb(name);
        let result: unknown;
        try {
          result = await run(mem);
        } catch (e) {
          throw new Error(`${tool} threw or rejected: ${String(e)}`);
        }
        expect(typeof result, tool).toBe('object');
        expect(result, tool).not.toBeNull();
        const status = (result as { status?: unknown }).status;
        seen[String(status)] = (seen[String(status)] ?? 0) + 1;
        expect(['SUCCESS', 'ERROR', 'NOT_FOUND'], `${tool} → ${safeJson(result)}`).toContain(
          status,
        );
        if (status === 'ERROR') {
          const e = result as { code?: unknown; message?: unknown };
          expect(typeof e.code, tool).toBe('string');
          expect(typeof e.message, tool).toBe('string');
        }
        if (status !== 'SUCCESS') {
          expect(await snapshotDb(name), `${tool} → ${safeJson(result)} changed the store`).toEqual(
            before,
          );
        }
      }),
      { numRuns: 200 },
    );
    // The junk reached both the validation and the store.
    expect(seen.ERROR).toBeGreaterThan(0);
    expect(seen.SUCCESS).toBeGreaterThan(0);
    // The engine still works after all that.
    ok(await mem.saveMemory('Seed/After', 'still fine'));
    expect(ok(await mem.queryMemory('Seed/After')).content).toBe('still fine');
  });

  it('exportMarkdown of junk resolves to a string or an error result', async () => {
    await fc.assert(
      fc.asyncProperty(pathish, async (p) => {
        const before = await snapshotDb(name);
        const r = await mem.exportMarkdown(p);
        if (typeof r !== 'string') {
          expect(r.status).toBe('ERROR');
          expect(await snapshotDb(name)).toEqual(before);
        }
      }),
      { numRuns: 30 },
    );
  });
});
