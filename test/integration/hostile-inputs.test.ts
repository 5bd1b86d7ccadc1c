// Hostile inputs found by fuzzing the engine (issue 10): content keeps every key, `__proto__`
// included; one set of validation rules holds for the tools, Markdown import and the JSON backup;
// versions stay safe integers; history rows are reachable and restorable; bad messages are
// refused with a clear INVALID_ARGUMENT. Every refusal writes nothing.
import fc from 'fast-check';
import Dexie from 'dexie';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryApi } from '../../src/memory/types';
import {
  closeAll,
  contentSnapshot,
  expectError,
  ok,
  openTestMemory,
  sharedEmbedder,
} from './helpers';

beforeAll(async () => {
  await sharedEmbedder().ready();
});
afterEach(closeAll);

const PROTO_JSON = '{"__proto__":{"polluted":true},"b":1}';
const MAX = Number.MAX_SAFE_INTEGER;

/** JSON text of a value, own keys in order (so a lost or moved `__proto__` key shows). */
const text = (v: unknown) => JSON.stringify(v);

function expectClean(): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty('polluted');
}

const META = (path: string, version = 1, created = '2025-01-01T00:00:00.000Z') =>
  `<!-- structured-memory {"path":${JSON.stringify(path)},"version":${version},` +
  `"created":"${created}","modified":"2025-01-02T00:00:00.000Z",` +
  `"accessed":"2025-01-03T00:00:00.000Z"} -->`;
const CHUNK = (fields: Record<string, unknown>) =>
  `> - **user** (similarity 0.50): said <!-- chunk ${JSON.stringify({
    turn_id: 1,
    sentence_id: 0,
    role: 'user',
    similarity: 0.5,
    tokenCount: 3,
    ...fields,
  })} -->`;
const markdownEntry = (path: string, extra = '', version = 1, created?: string) =>
  `# T\n\n# ${path}\n${META(path, version, created)}\n\ntext\n${extra ? `\n${extra}\n` : ''}`;

/** A backup with one valid entry, to which a test adds history rows. */
function backupWith(history: unknown[]): string {
  const entry = (path: string) => ({
    path,
    content: 'x',
    contextChunks: [],
    version: 2,
    created: '2025-01-01T00:00:00.000Z',
    modified: '2025-01-02T00:00:00.000Z',
    accessed: '2025-01-03T00:00:00.000Z',
  });
  return JSON.stringify({
    format: 'structured-memory-backup',
    version: 1,
    entries: [entry('A/B')],
    history: history.map((h) => ({
      path: 'A/B',
      version: 1,
      reason: 'update',
      replaced: '2025-01-02T00:00:00.000Z',
      ...(h as object),
      entry: { ...entry('A/B'), version: 1, ...((h as { entry?: object }).entry ?? {}) },
    })),
  });
}

/** Runs `act` and checks that it left the database as it was. */
async function unchangedBy(name: string, act: () => Promise<unknown>): Promise<unknown> {
  const before = await contentSnapshot(name);
  const result = await act();
  expect(await contentSnapshot(name)).toEqual(before);
  return result;
}

// ---------------------------------------------------------------------------------------------

describe('content round-trips exactly, whatever its keys', () => {
  it('saveMemory keeps a __proto__ key and pollutes nothing', async () => {
    const { mem } = openTestMemory();
    const content: unknown = JSON.parse(PROTO_JSON);
    ok(await mem.saveMemory('Content/Case', content, 0));
    const back = await mem.getEntry('Content/Case');
    expect(text((back as { content: unknown }).content)).toBe(PROTO_JSON);
    const query = await mem.queryMemory('Content/Case');
    expect(text((query as { content: unknown }).content)).toBe(PROTO_JSON);
    expectClean();
  });

  it('keeps __proto__ keys at any depth through save, JSON backup and Markdown', async () => {
    const key = fc.constantFrom('__proto__', 'constructor', 'prototype', 'a', 'toString');
    // JSON text, so that `__proto__` becomes an own key when parsed (as a model's arguments are).
    const json: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc
          .oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.boolean(), fc.constant(null))
          .map((x) => JSON.stringify(x)),
        fc.array(tie('v'), { maxLength: 3 }).map((xs) => `[${xs.join(',')}]`),
        fc
          .uniqueArray(fc.tuple(key, tie('v')), { selector: ([k]) => k, maxLength: 3 })
          .map((kv) => `{${kv.map(([k, x]) => `${JSON.stringify(k)}:${x}`).join(',')}}`),
      ),
    })).v;
    const samples = fc.sample(json, { numRuns: 40, seed: 10 });
    samples.push(`{"x":${PROTO_JSON},"__proto__":[${PROTO_JSON}]}`);
    const { mem } = openTestMemory();
    for (const [i, json] of samples.entries()) {
      ok(await mem.saveMemory(`Random/R${i}`, JSON.parse(json), 0));
    }
    const check = async (m: MemoryApi) => {
      for (const [i, json] of samples.entries()) {
        const back = await m.getEntry(`Random/R${i}`);
        expect(text((back as { content: unknown }).content), `Random/R${i}`).toBe(json);
      }
    };
    await check(mem);
    const backup = await mem.exportJson();
    expect(typeof backup).toBe('string');
    const viaJson = openTestMemory().mem;
    ok(await viaJson.importJson(backup));
    await check(viaJson);
    const md = await mem.exportMarkdown();
    const viaMarkdown = openTestMemory().mem;
    ok(await viaMarkdown.importMarkdown(md));
    await check(viaMarkdown);
    expectClean();
  });

  // Needs tools/write.ts to merge with `mergePatch` from validate.ts; flip to `it` then.
  it('updateMemory keeps a __proto__ key of a merge patch (RFC 7396)', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('Content/Patch', { a: 1 }, 0));
    ok(await mem.updateMemory('Content/Patch', JSON.parse('{"__proto__":{"x":1},"a":null}')));
    const back = await mem.getEntry('Content/Patch');
    expect(text((back as { content: unknown }).content)).toBe('{"__proto__":{"x":1}}');
    expectClean();
  });

  // Needs tools/read.ts's listMemory to build its tree with `setOwn` from validate.ts.
  it('a path with a __proto__ segment shows in listMemory', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('__proto__/x', 1, 0));
    ok(await mem.saveMemory('A/__proto__', 2, 0));
    const list = ok(await mem.listMemory());
    expect(text(list.tree)).toBe('{"A":{"__proto__":2},"__proto__":{"x":1}}');
    expectClean();
  });

  it('a path with a __proto__ segment is found by queryMemory, getEntry and getHistory', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('__proto__/x', 1, 0));
    ok(await mem.saveMemory('__proto__/x', 2, 0));
    expect((await mem.getEntry('__proto__/x')) as { content: unknown }).toMatchObject({
      content: 2,
    });
    expect(ok(await mem.getHistory('__proto__/x')).versions).toHaveLength(1);
    expectClean();
  });
});

// ---------------------------------------------------------------------------------------------

describe('one set of rules for the tools, Markdown import and the JSON backup', () => {
  const refused: [string, string][] = [
    ['chunk turn_id -1', markdownEntry('A', CHUNK({ turn_id: -1 }))],
    ['chunk sentence_id 1.5', markdownEntry('A', CHUNK({ sentence_id: 1.5 }))],
    ['chunk tokenCount -5', markdownEntry('A', CHUNK({ tokenCount: -5 }))],
    ['chunk turn_id 2^53', markdownEntry('A', CHUNK({ turn_id: 2 ** 53 }))],
    ['created in year +10000', markdownEntry('A', '', 1, '+010000-01-01T00:00:00.000Z')],
    ['created in year -1', markdownEntry('A', '', 1, '-000001-01-01T00:00:00.000Z')],
    ['created in year -1 by its offset', markdownEntry('A', '', 1, '0000-01-01T00:00:00+01:00')],
    ['version 2^53', markdownEntry('A', '', 2 ** 53)],
  ];

  it.each(refused)('Markdown import refuses %s, naming its line', async (_name, md) => {
    const { mem, name } = openTestMemory();
    ok(await mem.saveMemory('Keep', 'kept', 0));
    const r = await unchangedBy(name, () => mem.importMarkdown(md));
    expectError(r, 'INVALID_CONTENT');
    expect((r as { message: string }).message).toMatch(/nothing changed\. line \d+: /);
  });

  it('whatever Markdown import accepts, its own JSON backup restores', async () => {
    const edge = [
      markdownEntry('A', CHUNK({ turn_id: 0, sentence_id: 0, tokenCount: 0 })),
      markdownEntry('B', CHUNK({ turn_id: MAX, sentence_id: MAX, tokenCount: MAX })),
      markdownEntry('C', '', 1, '0000-01-01T00:00:00.000Z'),
      markdownEntry('D', '', 1, '9999-12-31T23:59:59.999Z'),
      markdownEntry('E', '', 1, '2025-06-01T00:00:00-05:00'),
      markdownEntry('F', '', MAX - 1),
    ];
    for (const md of edge) {
      const { mem } = openTestMemory();
      ok(await mem.importMarkdown(md));
      const backup = await mem.exportJson();
      const fresh = openTestMemory().mem;
      ok(await fresh.importJson(backup, 'replace'));
      expect(await fresh.exportMarkdown()).toBe(await mem.exportMarkdown());
    }
  });

  it('the JSON backup refuses what Markdown refuses', async () => {
    const bad: [string, (b: { entries: Record<string, unknown>[] }) => void][] = [
      ['a date an hour before year 0', (b) => (b.entries[0].created = '0000-01-01T00:00:00+01:00')],
      ['version 2^53', (b) => (b.entries[0].version = 2 ** 53)],
      ['version 1e300', (b) => (b.entries[0].version = 1e300)],
      [
        'chunk turn_id 2^53',
        (b) =>
          (b.entries[0].contextChunks = [
            {
              turn_id: 2 ** 53,
              sentence_id: 0,
              role: 'user',
              text: 't',
              similarity: 0.5,
              tokenCount: 1,
            },
          ]),
      ],
    ];
    for (const [what, spoil] of bad) {
      const backup = JSON.parse(backupWith([])) as { entries: Record<string, unknown>[] };
      spoil(backup);
      const { mem, name } = openTestMemory();
      const r = await unchangedBy(name, () => mem.importJson(JSON.stringify(backup)));
      expectError(r, 'INVALID_CONTENT');
      expect((r as { message: string }).message, what).toMatch(/^The file was not imported/);
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('versions stay safe integers', () => {
  async function atMax() {
    const tm = openTestMemory();
    ok(await tm.mem.importMarkdown(markdownEntry('Top', '', MAX)));
    return tm;
  }

  // Needs tools/write.ts to take the next version from `nextVersion` in validate.ts.
  it('saveMemory and updateMemory refuse to pass 2^53-1 and write nothing', async () => {
    const { mem, name } = await atMax();
    expectError(
      await unchangedBy(name, () => mem.saveMemory('Top', 'again', 0)),
      'INVALID_ARGUMENT',
    );
    expectError(
      await unchangedBy(name, () => mem.saveMemory('Top', { a: 1 }, 0)),
      'INVALID_ARGUMENT',
    );
    expect(ok(await mem.getHistory('Top')).versions).toHaveLength(0);
  });

  it('an import over it, a move and a restore refuse to pass 2^53-1 and write nothing', async () => {
    const { mem, name } = await atMax();
    expectError(
      // Other content over it (the same content would be left as it is).
      await unchangedBy(name, () =>
        mem.importMarkdown(markdownEntry('Top', '', 5).replace('\ntext\n', '\nother text\n')),
      ),
      'INVALID_ARGUMENT',
    );
    expectError(
      await unchangedBy(name, () => mem.importJson(backupWith([]).replace(/A\/B/g, 'Top'))),
      'INVALID_ARGUMENT',
    );
    // A history version at the top: a restore, or a new save where History lists it, would
    // have to go above it.
    ok(await mem.deleteMemory('Top'));
    const [old] = ok(await mem.getHistory('Top')).versions;
    expect(old.version).toBe(MAX);
    expectError(await unchangedBy(name, () => mem.restoreMemory(old.id)), 'INVALID_ARGUMENT');
    expectError(await unchangedBy(name, () => mem.saveMemory('Top', 'new', 0)), 'INVALID_ARGUMENT');
  });

  it('a move keeps the number, so an entry at 2^53-1 can still move', async () => {
    const { mem } = await atMax();
    ok(await mem.moveMemory('Top', 'Elsewhere'));
    const moved = await mem.getEntry('Elsewhere');
    expect('version' in moved && moved.version).toBe(MAX);
  });

  it('the error says how to go on', async () => {
    const { mem } = await atMax();
    const r = await mem.saveMemory('Top', 'again', 0);
    expect((r as { message: string }).message).toMatch(/highest version.*new path/);
  });
});

// ---------------------------------------------------------------------------------------------

describe('history rows of a backup are checked like entries', () => {
  const bad: [string, Record<string, unknown>][] = [
    ['an empty path', { path: '', entry: { path: '' } }],
    ['an empty segment', { path: 'a//b', entry: { path: 'a//b' } }],
    ['a NUL character', { path: 'a\u0000b', entry: { path: 'a\u0000b' } }],
    ['a path not in normal form', { path: ' A/B ', entry: { path: ' A/B ' } }],
    ['a path that differs from its entry', { path: 'A/B', entry: { path: 'C' } }],
    ['a version that differs from its entry', { version: 3 }],
    ['a version past 2^53-1', { version: 2 ** 53, entry: { version: 2 ** 53 } }],
    ['a replaced date past year 9999', { replaced: '+010000-01-01T00:00:00.000Z' }],
  ];

  it.each(bad)('importJson refuses a history row with %s', async (_what, row) => {
    const { mem, name } = openTestMemory();
    const r = await unchangedBy(name, () => mem.importJson(backupWith([row])));
    expectError(r, 'INVALID_CONTENT');
    expect((r as { message: string }).message).toMatch(/history(\[0\]|\/0\/)/);
  });

  it('restores a history row whose entry names another path (from an older app) to its own path', async () => {
    const { mem, name } = openTestMemory();
    ok(await mem.importJson(backupWith([{}])));
    ok(await mem.saveMemory('C', 'other entry', 0));
    // Make the stored history row disagree with its entry, as older versions could.
    const db = new Dexie(name);
    await db.open();
    await db
      .table('history')
      .toCollection()
      .modify((h: { entry: { path: string } }) => {
        h.entry.path = 'C';
      });
    db.close();
    const [h] = ok(await mem.getHistory('A/B')).versions;
    const r = ok(await mem.restoreMemory(h.id));
    expect(r.path).toBe('A/B');
    expect((await mem.getEntry('A/B')) as { content: unknown }).toMatchObject({ content: 'x' });
    expect((await mem.getEntry('C')) as { content: unknown }).toMatchObject({
      content: 'other entry',
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('messages that cannot be stored are refused clearly', () => {
  const hostile: [string, Record<string, unknown>][] = [
    ['a function in meta', { meta: { f: () => 1 } }],
    ['a symbol in meta', { meta: { s: Symbol('x') } }],
    [
      'a cycle in meta',
      {
        meta: (() => {
          const o: Record<string, unknown> = {};
          o.o = o;
          return o;
        })(),
      },
    ],
    ['meta that is an array', { meta: [1] }],
    ['a function in toolCalls', { toolCalls: [{ id: 'c', name: 'n', arguments: () => 1 }] }],
    ['toolCalls that are not a list', { toolCalls: { id: 'c', name: 'n' } }],
    ['a tool call without a name', { toolCalls: [{ id: 'c', arguments: {} }] }],
    ['a toolCallId that is not text', { toolCallId: 5 }],
  ];

  it.each(hostile)('addMessage refuses %s with INVALID_ARGUMENT', async (_what, extra) => {
    const { mem, name } = openTestMemory();
    ok(await mem.createConversation('c'));
    const msg = { conversationId: 1, role: 'user' as const, text: 'hi', ...extra };
    const r = await unchangedBy(name, () =>
      mem.addMessage(msg as unknown as Parameters<MemoryApi['addMessage']>[0]),
    );
    expectError(r, 'INVALID_ARGUMENT');
  });

  it('updateMessage refuses meta or toolCalls that cannot be stored', async () => {
    const { mem, name } = openTestMemory();
    ok(await mem.createConversation('c'));
    const id = ok(await mem.addMessage({ conversationId: 1, role: 'user', text: 'hi' })).id;
    for (const patch of [
      { meta: { f: () => 1 } },
      { toolCalls: [{ id: 'c', name: 'n', arguments: Symbol('x') }] },
    ]) {
      const r = await unchangedBy(name, () =>
        mem.updateMessage(id, patch as unknown as Parameters<MemoryApi['updateMessage']>[1]),
      );
      expectError(r, 'INVALID_ARGUMENT');
    }
  });

  it('stores JSON meta and tool calls, and a backup restores them', async () => {
    const { mem } = openTestMemory();
    ok(await mem.createConversation('c'));
    ok(
      await mem.addMessage({
        conversationId: 1,
        role: 'assistant',
        text: 'done',
        toolCalls: [{ id: 'c1', name: 'saveMemory', arguments: { path: 'A' }, result: { ok: 1 } }],
        meta: JSON.parse('{"mode":"native","__proto__":1}') as Record<string, unknown>,
      }),
    );
    const fresh = openTestMemory().mem;
    ok(await fresh.importJson(await mem.exportJson(), 'replace'));
    const [m] = await fresh.getMessages(1);
    expect(m.toolCalls).toEqual([
      { id: 'c1', name: 'saveMemory', arguments: { path: 'A' }, result: { ok: 1 } },
    ]);
    expect(text(m.meta)).toBe('{"mode":"native","__proto__":1}');
  });
});
