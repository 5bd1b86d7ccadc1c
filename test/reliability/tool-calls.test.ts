// Reliability: every memory tool called the way the chat calls it (runToolCall: the model's JSON
// text, parsed, checked against the tool's schema, run on the engine), with hostile, garbled and
// oversized arguments, several calls a case, each case on a fresh store. After every call: it
// answered in time with a status, a refusal or error wrote nothing, a success wrote exactly what
// it says, the tables still agree, and no prototype gained a key.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXTRA_TOOLS, MEMORY_TOOLS, runToolCall, type MemoryTool } from '../../src/chat/tools';
import type { ToolCall } from '../../src/llm/types';
import type { JsonValue, MemoryApi, MemoryEntry } from '../../src/memory/types';
import { mergePatch } from '../../src/memory/validate';
import { containsTypedArray, ok, openTestMemory, sharedEmbedder } from '../integration/helpers';
import {
  applyGarble,
  garble,
  hostileKey,
  jsonText,
  markup,
  objectText,
  pathText,
  type Garble,
} from './arbitraries';
import { Tally, check, runCount, testTimeout, uncaughtDuring, within } from './config';
import {
  dispose,
  entriesByPath,
  expectNoPollution,
  expectSound,
  safeJson,
  snapshotDb,
  text,
  withoutReads,
} from './store';

const TOOLS: readonly MemoryTool[] = [...MEMORY_TOOLS, ...EXTRA_TOOLS];
const DEFAULTS = { contextTokens: 1000, recencyBias: 0.3 };

/** How each argument is usually filled; any of them may instead be hostile JSON or left out. */
const plausible: Record<string, fc.Arbitrary<string>> = {
  path: pathText.map((p) => JSON.stringify(p)),
  rootPath: pathText.map((p) => JSON.stringify(p)),
  from: pathText.map((p) => JSON.stringify(p)),
  to: pathText.map((p) => JSON.stringify(p)),
  content: jsonText,
  patch: fc
    .uniqueArray(fc.tuple(hostileKey, jsonText), { selector: ([k]) => k, maxLength: 3 })
    .map(objectText),
  contextTokens: fc.oneof(fc.integer({ min: 0, max: 4000 }).map(String), jsonText),
  query: fc.oneof(markup, fc.string({ maxLength: 20 })).map((q) => JSON.stringify(q)),
  recencyBias: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }).map(String), jsonText),
  recursive: fc.constantFrom('true', 'false'),
};

interface Call {
  name: string;
  args: string;
  garble: Garble;
}

const argumentText = (tool: MemoryTool): fc.Arbitrary<string> => {
  const names = Object.keys(tool.parameters.properties);
  const one = (name: string) =>
    fc
      .oneof(
        { weight: 10, arbitrary: plausible[name] ?? jsonText },
        { weight: 1, arbitrary: jsonText },
        { weight: 1, arbitrary: fc.constant(undefined) },
      )
      .map((v): [string, string] | undefined => (v === undefined ? undefined : [name, v]));
  const extra = fc.oneof(
    { weight: 3, arbitrary: fc.constant([]) },
    {
      weight: 1,
      arbitrary: fc.array(fc.tuple(hostileKey, jsonText), { minLength: 1, maxLength: 2 }),
    },
  );
  return fc
    .tuple(fc.tuple(...names.map(one)), extra)
    .map(([given, more]) =>
      objectText([...given.filter((p): p is [string, string] => p !== undefined), ...more]),
    );
};

const toolName = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...TOOLS.map((t) => t.name)) },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.constantFrom('__proto__', 'constructor', 'toString', '', 'saveMemory ', 'SAVEMEMORY'),
      markup,
    ),
  },
);

const call: fc.Arbitrary<Call> = toolName.chain((name) => {
  const tool = TOOLS.find((t) => t.name === name);
  const args = tool ? argumentText(tool) : jsonText;
  // Two calls in three arrive as written; the third garbled.
  const maybeGarbled = fc.oneof(
    { weight: 2, arbitrary: fc.constant<Garble>({ kind: 'none' }) },
    { weight: 1, arbitrary: garble },
  );
  return fc.record({ name: fc.constant(name), args, garble: maybeGarbled });
});

/** A store as the chat leaves it: a conversation turn and a few entries, one with history. */
async function seeded(): Promise<{ mem: MemoryApi; name: string }> {
  const { mem, name } = openTestMemory();
  ok(
    await mem.recordTurn({
      conversationId: 1,
      role: 'user',
      text: 'The seed entries describe a plan. <b>Markup</b> stays text. Phase one ships in March.',
    }),
  );
  ok(await mem.saveMemory('Seed/One', JSON.parse('{"note":"first","__proto__":{"x":1}}')));
  ok(await mem.saveMemory('Seed/Two/Deep', 'a deep seed'));
  ok(await mem.saveMemory('A/B', { x: 1, tags: ['a'] }));
  ok(await mem.saveMemory('A/B', { x: 2, tags: ['a', 'b'] }));
  ok(await mem.saveMemory('A/B/C', [1, 2, 3]));
  return { mem, name };
}

const contentOf = (e: MemoryEntry | undefined) => (e ? text(e.content) : 'absent');

/** Paths at or below `path`. */
const under = (paths: Iterable<string>, path: string) =>
  [...paths].filter((p) => p === path || p.startsWith(`${path}/`));

/** Asserts what one call did to the store, given the snapshots around it. */
function expectEffect(
  label: string,
  tool: string,
  args: unknown,
  result: Record<string, unknown>,
  refused: boolean,
  before: Awaited<ReturnType<typeof snapshotDb>>,
  after: Awaited<ReturnType<typeof snapshotDb>>,
): void {
  expectSound(after, label);
  if (refused || result.status !== 'SUCCESS') {
    expect(after, `${label}: a refusal changed the store`).toEqual(before);
    return;
  }
  const was = entriesByPath(before);
  const now = entriesByPath(after);
  const a = args as Record<string, unknown>;
  const untouched = (except: string[]) => {
    for (const [path, entry] of was) {
      if (except.includes(path)) continue;
      expect(now.get(path), `${label}: "${path}" changed`).toEqual(entry);
    }
    for (const path of now.keys()) {
      if (!was.has(path)) expect(except, `${label}: "${path}" appeared`).toContain(path);
    }
  };
  switch (tool) {
    case 'saveMemory': {
      const path = result.path as string;
      const saved = now.get(path);
      expect(contentOf(saved), `${label}: saved content`).toBe(text(a.content));
      if (result.unchanged) {
        // The entry held this content already: nothing was written.
        expect(after, `${label}: a save that changed nothing wrote`).toEqual(before);
        break;
      }
      // One above the live entry and every version History lists there (docs/trash.md).
      const listed = ((before.history ?? []) as { path: string; version: number }[])
        .filter((h) => h.path === path)
        .map((h) => h.version);
      expect(saved?.version, `${label}: version`).toBe(
        Math.max(was.get(path)?.version ?? 0, ...listed) + 1,
      );
      untouched([path]);
      break;
    }
    case 'updateMemory': {
      const path = result.path as string;
      const old = was.get(path)!;
      expect(contentOf(now.get(path)), `${label}: merged content`).toBe(
        text(mergePatch(old.content, a.patch as JsonValue)),
      );
      untouched([path]);
      break;
    }
    case 'deleteMemory': {
      const path = result.path as string;
      const gone = under(was.keys(), path);
      expect(result.deleted, `${label}: deleted count`).toBe(gone.length);
      for (const p of gone) expect(now.has(p), `${label}: "${p}" still there`).toBe(false);
      untouched(gone);
      break;
    }
    case 'moveMemory': {
      const from = result.from as string;
      const to = result.to as string;
      const moved = under(was.keys(), from);
      expect(result.moved, `${label}: moved count`).toBe(moved.length);
      const landed = moved.map((p) => to + p.slice(from.length));
      for (const [i, p] of moved.entries()) {
        expect(now.has(p), `${label}: "${p}" still there`).toBe(false);
        expect(contentOf(now.get(landed[i])), `${label}: "${landed[i]}"`).toBe(
          contentOf(was.get(p)),
        );
      }
      untouched([...moved, ...landed]);
      break;
    }
    default:
      // Reads may only note when an entry was read.
      expect(withoutReads(after), `${label}: a read changed the store`).toEqual(
        withoutReads(before),
      );
  }
}

beforeAll(async () => {
  await sharedEmbedder().ready();
});

const RUNS = runCount(12);

// Found by the property below (a long run): queryMemory noted the read with Dexie's update(),
// whose copy of the row dropped a `__proto__` key of the stored content. Fixed in
// src/memory/tools/read.ts (queryMemory); kept as a quick case of its own.
it('queryMemory of content with a __proto__ key leaves the stored content as it was', async () => {
  const { mem, name } = await seeded();
  try {
    const before = await snapshotDb(name);
    const call: ToolCall = {
      id: 'call_q',
      type: 'function',
      function: { name: 'queryMemory', arguments: '{"path":"Seed/One"}' },
    };
    const outcome = await runToolCall(call, TOOLS, mem, DEFAULTS);
    expect(text((outcome.result as { content: unknown }).content)).toBe(
      '{"note":"first","__proto__":{"x":1}}',
    );
    expect(withoutReads(await snapshotDb(name))).toEqual(withoutReads(before));
  } finally {
    await dispose(mem, name);
  }
});

describe('reliability: memory tools with hostile arguments, as the chat calls them', () => {
  afterAll(() => expectNoPollution('after all tool cases'));

  it(
    'each call answers in time; refusals write nothing; successes write exactly their effect',
    async () => {
      const seen = new Tally();
      await check(
        'memory tools with hostile arguments',
        fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 6 }), async (calls) => {
          const { mem, name } = await seeded();
          try {
            for (const [i, c] of calls.entries()) {
              const raw = applyGarble(c.args, c.garble);
              const label = `call ${i + 1}: ${c.name}(${safeJson(raw.slice(0, 300))})`;
              const tc: ToolCall = {
                id: `call_${i}`,
                type: 'function',
                function: { name: c.name, arguments: raw },
              };
              const before = await snapshotDb(name);
              const [outcome, uncaught] = await uncaughtDuring(() =>
                within(runToolCall(tc, TOOLS, mem, DEFAULTS), label),
              );
              expect(uncaught, `${label}: uncaught errors`).toEqual([]);
              const result = outcome.result as Record<string, unknown>;
              seen.add(
                `${TOOLS.some((t) => t.name === c.name) ? c.name : 'unknown tool'}: ${outcome.refused ? 'refused' : String(result.code ?? result.status)}`,
              );
              expect(['SUCCESS', 'ERROR', 'NOT_FOUND'], `${label} → ${safeJson(result)}`).toContain(
                result?.status,
              );
              if (result.status === 'ERROR') {
                expect(typeof result.code, label).toBe('string');
                expect(String(result.message).trim(), label).not.toBe('');
              }
              // The result goes back to the model as JSON text.
              expect(() => JSON.stringify(result), label).not.toThrow();
              expect(containsTypedArray(result), `${label}: vectors in the result`).toBe(false);
              const after = await snapshotDb(name);
              expectEffect(label, c.name, outcome.args, result, outcome.refused, before, after);
              expectNoPollution(label);
            }
            // The engine still answers normally afterwards.
            ok(await mem.saveMemory('After/Check', 'still fine'));
            expect(ok(await mem.queryMemory('After/Check')).content).toBe('still fine');
            const list = ok(await mem.listMemory(''));
            expect(list.totalEntries).toBe((await snapshotDb(name)).structured_memory.length);
          } finally {
            await dispose(mem, name);
          }
        }),
        { runs: RUNS },
      );
      seen.print('memory tools with hostile arguments');
    },
    testTimeout(RUNS * 6),
  );
});
