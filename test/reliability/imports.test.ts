// Reliability: imports of damaged files. The JSON backup and the Markdown export of a store full
// of awkward content are cut short, garbled, repeated and blown up to many megabytes, then
// imported into a store that already holds data (merge, and replace for JSON). Each import must
// answer in time and leave the store exactly as before (an error) or exactly as the file says
// (a success): never a part of the file.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMarkdown } from '../../src/memory/markdown';
import type { JsonValue, MemoryApi, MemoryEntry, Message } from '../../src/memory/types';
import { MAX_CONTENT_BYTES } from '../../src/memory/validate';
import { ok, openTestMemory, sharedEmbedder, type Snapshot } from '../integration/helpers';
import { MARKUP, applyDamage, damage, describeDamage, type Damage } from './arbitraries';
import { Tally, check, runCount, testTimeout, uncaughtDuring, within } from './config';
import {
  dispose,
  entriesByPath,
  expectNoPollution,
  expectSound,
  safeJson,
  snapshotDb,
  text,
} from './store';

interface FileEntry {
  path: string;
  content: JsonValue;
}

/** A store with everything a file carries: odd content, chunks, history, conversations. */
async function fillSource(mem: MemoryApi): Promise<void> {
  ok(
    await mem.recordTurn({
      conversationId: 1,
      role: 'user',
      text: `Remember the launch plan. ${MARKUP[1]} It ships in March. Ünïcödé and 😀 too.`,
    }),
  );
  ok(
    await mem.addMessage({
      conversationId: 1,
      role: 'assistant',
      text: 'Saved.',
      toolCalls: [{ id: 'call_1', name: 'saveMemory', arguments: { path: 'Plan/Launch' } }],
      meta: JSON.parse('{"mode":"native","__proto__":{"polluted":1}}') as Record<string, unknown>,
    }),
  );
  const contents: [string, unknown][] = [
    ['Plan/Launch', { month: 'March', note: MARKUP[0] }],
    ['Plan/Launch/Risks', ['late', MARKUP[2], { nested: { deeper: [1, 2, 3] } }]],
    [
      'Plan/Text',
      `Line one\n# not a heading\n<!-- structured-memory {"path":"X"} -->\n${MARKUP[4]}`,
    ],
    [
      'Proto/Keys',
      JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":1},"b":1}'),
    ],
    ['Numbers', { big: 9007199254740991, small: -0.000001, zero: 0, t: true, n: null }],
    ['Unicode/Ünï 😀', 'text with \u202e bidi and \u0000 NUL'],
    ['Near/Cap', 'q'.repeat(MAX_CONTENT_BYTES - 100)],
  ];
  for (const [path, content] of contents) ok(await mem.saveMemory(path, content));
  ok(await mem.saveMemory('Plan/Launch', { month: 'April', note: MARKUP[3] }));
  ok(await mem.deleteMemory('Numbers'));
  ok(await mem.saveMemory('Numbers', [1, 2, 3]));
}

/** The store every import goes into: one path the files also hold, one they do not. */
async function target(): Promise<{ mem: MemoryApi; name: string }> {
  const tm = openTestMemory();
  ok(await tm.mem.recordTurn({ conversationId: 1, role: 'user', text: 'The target keeps this.' }));
  ok(await tm.mem.saveMemory('Plan/Launch', 'the target version'));
  ok(await tm.mem.saveMemory('Target/Only', { kept: true }));
  return tm;
}

/** A valid backup of `n` generated entries of about `size` characters each. */
function generatedBackup(n: number, size: number): string {
  const at = '2025-01-01T00:00:00.000Z';
  const entries = Array.from({ length: n }, (_, i) => ({
    path: `Bulk/E${i}`,
    content: { i, text: `${MARKUP[i % MARKUP.length]} ${'b'.repeat(size)}` },
    contextChunks: [],
    version: 1,
    created: at,
    modified: at,
    accessed: at,
  }));
  return JSON.stringify({ format: 'structured-memory-backup', version: 1, entries });
}

let files: Record<'json' | 'markdown', string>;

beforeAll(async () => {
  await sharedEmbedder().ready();
  const { mem, name } = openTestMemory();
  await fillSource(mem);
  const json = await mem.exportJson();
  const markdown = await mem.exportMarkdown();
  if (typeof json !== 'string' || typeof markdown !== 'string') throw new Error('export failed');
  files = { json, markdown };
  await dispose(mem, name);
});

type Source =
  | { kind: 'json' | 'markdown'; damage: Damage | null }
  | { kind: 'generated'; entries: number; size: number; damage: Damage | null };

const source: fc.Arbitrary<Source> = fc.oneof(
  fc.record({
    kind: fc.constantFrom('json' as const, 'markdown' as const),
    damage: fc.option(damage, { freq: 6 }),
  }),
  fc.record({
    kind: fc.constant('generated' as const),
    entries: fc.constantFrom(1, 300, 3_000),
    size: fc.constantFrom(10, 2_000, MAX_CONTENT_BYTES),
    damage: fc.option(damage, { freq: 3 }),
  }),
);

const fileOf = (s: Source): string => {
  const base = s.kind === 'generated' ? generatedBackup(s.entries, s.size) : files[s.kind];
  return s.damage ? applyDamage(base, s.damage) : base;
};

const describeSource = (s: Source, file: string) =>
  `${s.kind === 'generated' ? `${s.entries} generated entries of ${s.size} characters` : s.kind}` +
  `${s.damage ? `, ${describeDamage(s.damage)}` : ''} (${file.length} characters)`;

/** What a successful import must have left: the file's entries and everything else as it was. */
function expectImported(
  label: string,
  fileEntries: FileEntry[],
  replace: boolean,
  result: { imported: number; created: number; updated: number },
  before: Snapshot,
  after: Snapshot,
): void {
  const was = entriesByPath(before);
  const now = entriesByPath(after);
  expect(result.imported, `${label}: imported count`).toBe(fileEntries.length);
  const existed = replace ? [] : fileEntries.filter((e) => was.has(e.path));
  expect(result.updated, `${label}: updated count`).toBe(existed.length);
  expect(result.created, `${label}: created count`).toBe(fileEntries.length - existed.length);
  for (const e of fileEntries) {
    expect(text(now.get(e.path)?.content), `${label}: "${e.path}"`).toBe(text(e.content));
  }
  const inFile = new Set(fileEntries.map((e) => e.path));
  for (const [path, entry] of was) {
    if (inFile.has(path)) continue;
    if (replace) expect(now.has(path), `${label}: "${path}" survived a replace`).toBe(false);
    else expect(now.get(path), `${label}: "${path}" changed`).toEqual(entry);
  }
  for (const path of now.keys()) {
    expect(inFile.has(path) || (!replace && was.has(path)), `${label}: "${path}" appeared`).toBe(
      true,
    );
  }
}

const RUNS = runCount(10);

describe('reliability: imports of truncated, garbled and oversized files', () => {
  afterAll(() => expectNoPollution('after all import cases'));

  it(
    'each import answers in time and leaves the store as before or exactly as the file says',
    async () => {
      const seen = new Tally();
      await check(
        'imports of damaged files',
        fc.asyncProperty(source, fc.boolean(), async (s, replace) => {
          const file = fileOf(s);
          const asJson = s.kind !== 'markdown';
          const label = `${asJson ? `importJson (${replace ? 'replace' : 'merge'})` : 'importMarkdown'} of ${describeSource(s, file)}`;
          const { mem, name } = await target();
          try {
            const before = await snapshotDb(name);
            const [result, uncaught] = await uncaughtDuring(() =>
              within(
                asJson
                  ? mem.importJson(file, replace ? 'replace' : 'merge')
                  : mem.importMarkdown(file),
                label,
              ),
            );
            expect(uncaught, `${label}: uncaught errors`).toEqual([]);
            seen.add(
              `${s.kind}${s.damage ? ` ${s.damage.kind}` : ''}: ${'code' in result ? result.code : result.status}`,
            );
            const after = await snapshotDb(name);
            expectSound(after, label);
            expectNoPollution(label);
            if (result.status !== 'SUCCESS') {
              expect(result.status, `${label} → ${safeJson(result)}`).toBe('ERROR');
              expect(result.message, label).toMatch(/\S/);
              expect(after, `${label}: a refused import changed the store`).toEqual(before);
            } else {
              let fileEntries: FileEntry[];
              if (asJson) {
                const data = JSON.parse(file) as { entries: FileEntry[]; messages?: Message[] };
                fileEntries = data.entries;
                const messages = (after.messages ?? []).length;
                const expected =
                  (replace ? 0 : (before.messages ?? []).length) + (data.messages?.length ?? 0);
                expect(messages, `${label}: messages`).toBe(expected);
              } else {
                const parsed = parseMarkdown(file);
                expect(parsed.ok, `${label}: the file imported, yet does not parse`).toBe(true);
                fileEntries = parsed.ok ? parsed.entries : [];
                expect(after.messages, `${label}: messages changed`).toEqual(before.messages);
              }
              expectImported(label, fileEntries, asJson && replace, result, before, after);
            }
            // The store still takes a write and finds it.
            ok(await mem.saveMemory('After/Import', 'still fine'));
            const rows = (await snapshotDb(name)).structured_memory as MemoryEntry[];
            expect(ok(await mem.listMemory('')).totalEntries, label).toBe(rows.length);
          } finally {
            await dispose(mem, name);
          }
        }),
        { runs: RUNS },
      );
      seen.print('imports of damaged files');
    },
    testTimeout(RUNS),
  );
});
