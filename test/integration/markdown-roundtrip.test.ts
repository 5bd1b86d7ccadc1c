// Markdown export → import (docs/design.md, "Markdown export and import"): a fresh database gets
// identical entries; a bad file changes nothing; importing into a non-empty database merges.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ContextChunk, JsonValue, MemoryApi, MemoryEntry } from '../../src/memory/types';
import {
  DAY,
  closeAll,
  expectError,
  ms,
  ok,
  openTestMemory,
  sharedEmbedder,
  snapshotDb,
  tableRows,
} from './helpers';

beforeAll(async () => {
  await sharedEmbedder().ready();
});
afterEach(closeAll);

const deepPath = 'D1/D2/D3/D4/D5/D6/D7/D8';

/** Entries of every content kind, some with chunks, some with several versions. */
async function populated() {
  const tm = openTestMemory();
  const { mem, clock } = tm;
  ok(
    await mem.recordTurn({
      conversationId: 1,
      role: 'user',
      text: 'HaloWeave should support multiple windows. Tabs can be dragged between windows.',
    }),
  );
  ok(
    await mem.recordTurn({
      conversationId: 1,
      role: 'assistant',
      text: 'Window state stays in sync through a shared channel. The database schema gets a windows table.',
    }),
  );
  const saves: [string, JsonValue, number?][] = [
    ['HaloWeave/Goals', 'Goals of the HaloWeave app'],
    [
      'HaloWeave/Goals/MultiWindowSupport',
      { goal: 'multiple windows', steps: ['sync', 'drag tabs'], done: false, priority: 1 },
    ],
    ['HaloWeave/Notes/Plain', 'A plain note.\nIt has two lines.', 0],
    [
      'HaloWeave/Notes/Markdownish',
      '# Not a heading\n\n```js\nconst x = 1;\n```\n> not a quote',
      0,
    ],
    ['Numbers/Answer', 42, 0],
    ['Numbers/Pi', 3.14159, 0],
    ['Flags/On', true, 0],
    ['Nothing/Here', null, 0],
    ['Lists/Tags', ['a', 'b', { c: [1, 2] }], 0],
    ['Strings/LooksLikeJson', '{"a":1}', 0],
    ['Strings/LooksLikeNumber', '42', 0],
    ['Strings/Empty', '', 0],
    [deepPath, 'deep', 0],
    ['Café/Menü Items', 'unicode path with a space', 0],
  ];
  for (const [path, content, tokens] of saves) {
    ok(await mem.saveMemory(path, content, tokens));
    clock.advance(DAY / 24);
  }
  clock.advanceDays(2);
  ok(
    await mem.saveMemory('HaloWeave/Goals/MultiWindowSupport', {
      goal: 'multiple windows',
      steps: ['sync', 'drag tabs', 'restore layout'],
      done: false,
      priority: 1,
    }),
  );
  clock.advanceDays(1);
  ok(await mem.saveMemory('Numbers/Answer', 43, 0));
  return tm;
}

type Comparable = {
  path: string;
  heading: string;
  parent_path: string;
  content: JsonValue;
  version: number;
  created: number;
  modified: number;
  model: string;
  chunks: { role: string; text: string; similarity: number; tokenCount: number }[];
};

function comparable(row: MemoryEntry): Comparable {
  return {
    path: row.path,
    heading: row.heading,
    parent_path: row.parent_path,
    content: row.content,
    version: row.version,
    created: ms(row.created),
    modified: ms(row.modified),
    model: row.model,
    chunks: row.contextChunks.map((c: ContextChunk) => ({
      role: c.role,
      text: c.text,
      similarity: c.similarity,
      tokenCount: c.tokenCount,
    })),
  };
}

async function entries(name: string): Promise<MemoryEntry[]> {
  const rows = await tableRows<MemoryEntry>(name, 'structured_memory');
  return [...rows].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function expectVectorsClose(a: Float32Array, b: Float32Array, label: string): void {
  expect(b, label).toBeInstanceOf(Float32Array);
  expect(b.length, label).toBe(a.length);
  let maxDiff = 0;
  for (let i = 0; i < a.length; i++) maxDiff = Math.max(maxDiff, Math.abs(a[i] - b[i]));
  expect(maxDiff, `${label}: largest component difference`).toBeLessThan(1e-4);
}

async function exportText(mem: MemoryApi, root?: string): Promise<string> {
  const md = await mem.exportMarkdown(root);
  if (typeof md !== 'string') throw new Error(`exportMarkdown failed: ${JSON.stringify(md)}`);
  return md;
}

describe('markdown export', () => {
  it('is readable: one heading per entry (depth, capped at 6), metadata comments, quoted chunks', async () => {
    const { mem, name } = await populated();
    const md = await exportText(mem);
    const rows = await entries(name);

    const comments = [...md.matchAll(/<!--\s*structured-memory\s+(\{.*?\})\s*-->/g)].map(
      (m) =>
        JSON.parse(m[1]) as { path: string; version: number; created: unknown; modified: unknown },
    );
    expect(comments.map((c) => c.path).sort()).toEqual(rows.map((r) => r.path).sort());
    for (const row of rows) {
      const c = comments.find((x) => x.path === row.path);
      expect(c?.version, row.path).toBe(row.version);
      expect(ms(c?.created), row.path).toBe(ms(row.created));
      expect(ms(c?.modified), row.path).toBe(ms(row.modified));
    }

    const lines = md.split('\n');
    expect(lines.some((l) => /^### \S/.test(l) && l.includes('MultiWindowSupport'))).toBe(true);
    expect(lines.some((l) => /^###### \S/.test(l) && l.includes('D8'))).toBe(true);
    expect(lines.some((l) => /^#{7,}/.test(l))).toBe(false);
    expect(md).toContain('```json');

    const chunked = rows.find((r) => r.path === 'HaloWeave/Goals/MultiWindowSupport');
    expect(chunked?.contextChunks.length).toBeGreaterThan(0);
    for (const c of chunked?.contextChunks ?? []) {
      expect(
        lines.some((l) => l.startsWith('>') && l.includes(c.text.trim())),
        `chunk "${c.text}" is quoted`,
      ).toBe(true);
    }
  });

  it('of a subtree holds only that subtree (segment-aware)', async () => {
    const { mem } = await populated();
    ok(await mem.saveMemory('HaloWeave/GoalsArchive/Old', 'archived', 0));
    const md = await exportText(mem, 'HaloWeave/Goals');
    const paths = [...md.matchAll(/<!--\s*structured-memory\s+(\{.*?\})\s*-->/g)]
      .map((m) => (JSON.parse(m[1]) as { path: string }).path)
      .sort();
    expect(paths).toEqual(['HaloWeave/Goals', 'HaloWeave/Goals/MultiWindowSupport']);
  });
});

describe('markdown round trip', () => {
  it('export → import into a fresh database gives identical entries', async () => {
    const source = await populated();
    const md = await exportText(source.mem);
    // Same clock, so the export header's date is the same for both files.
    const target = openTestMemory({ clock: source.clock });

    const r = ok(await target.mem.importMarkdown(md));
    // Exporting the imported copy gives the same file, metadata (accessed included) and all.
    expect(await exportText(target.mem)).toBe(md);

    const sourceRows = await entries(source.name);
    expect(r).toMatchObject({
      imported: sourceRows.length,
      created: sourceRows.length,
      updated: 0,
    });

    const targetRows = await entries(target.name);
    const byPath = new Map(targetRows.map((row) => [row.path, row]));
    expect(targetRows.map((row) => row.path)).toEqual(sourceRows.map((row) => row.path));
    for (const s of sourceRows) {
      const t = byPath.get(s.path) as MemoryEntry;
      const cs = comparable(s);
      const ct = comparable(t);
      expect(ct.chunks.length, s.path).toBe(cs.chunks.length);
      ct.chunks.forEach((c, i) => {
        expect(c.similarity, `${s.path} chunk ${i} similarity`).toBeCloseTo(
          cs.chunks[i].similarity,
          6,
        );
        c.similarity = cs.chunks[i].similarity;
      });
      expect(ct, s.path).toEqual(cs);
      expectVectorsClose(s.embedding, t.embedding, `${s.path} entry embedding`);
      s.contextChunks.forEach((c, i) =>
        expectVectorsClose(c.embedding, t.contextChunks[i].embedding, `${s.path} chunk ${i}`),
      );
    }

    // Through the public API too.
    for (const s of sourceRows) {
      const a = ok(await source.mem.queryMemory(s.path));
      const b = ok(await target.mem.queryMemory(s.path));
      expect(b.content, s.path).toEqual(a.content);
      expect(b.metadata.version, s.path).toBe(a.metadata.version);
      expect(ms(b.metadata.created), s.path).toBe(ms(a.metadata.created));
      expect(ms(b.metadata.modified), s.path).toBe(ms(a.metadata.modified));
      expect(b.contextChunks.map((c) => [c.role, c.text])).toEqual(
        a.contextChunks.map((c) => [c.role, c.text]),
      );
    }
  });

  it('a subtree export imports into a fresh database with only that subtree', async () => {
    const source = await populated();
    const md = await exportText(source.mem, 'HaloWeave/Notes');
    const target = openTestMemory();
    const r = ok(await target.mem.importMarkdown(md));
    expect(r.imported).toBe(2);
    const rows = await entries(target.name);
    expect(rows.map((x) => x.path)).toEqual([
      'HaloWeave/Notes/Markdownish',
      'HaloWeave/Notes/Plain',
    ]);
    expect(ok(await target.mem.queryMemory('HaloWeave/Notes/Markdownish')).content).toBe(
      '# Not a heading\n\n```js\nconst x = 1;\n```\n> not a quote',
    );
  });
});

describe('markdown import of a bad file', () => {
  /** A source export with one string entry and one object entry, to corrupt. */
  async function exportToCorrupt(): Promise<string> {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('Good/Entry', 'a good entry', 0));
    ok(await mem.saveMemory('Bad/Entry', { a: 1, b: 'two' }, 0));
    return exportText(mem);
  }

  async function nonEmptyTarget() {
    const tm = openTestMemory();
    ok(await tm.mem.saveMemory('Existing/Entry', { keep: true }, 0));
    ok(await tm.mem.saveMemory('Bad/Entry', 'will not be overwritten', 0));
    return tm;
  }

  it('changes nothing and says what is wrong', async () => {
    const md = await exportToCorrupt();
    expect(md).toMatch(/```json\s*\n[\s\S]*?"two"[\s\S]*?```/);
    const badPath = /"path":\s*"Bad\/Entry"/;
    expect(md).toMatch(badPath);
    const corruptions: [string, string][] = [
      ['broken JSON in a fenced block', md.replace(/"two"\s*\}?/, '"two", ')],
      ['an invalid path in the metadata', md.replace(badPath, '"path":"Bad//Entry"')],
      ['broken JSON in the metadata comment', md.replace(badPath, '"path":"Bad/Entry')],
      ['a version that is not a number', md.replace(/"version":\s*1/, '"version":"one"')],
    ];
    for (const [label, bad] of corruptions) {
      expect(bad, `${label}: the corruption applied`).not.toBe(md);
      const { mem, name } = await nonEmptyTarget();
      const before = await snapshotDb(name);
      const r = await mem.importMarkdown(bad);
      expect(r.status, `${label}: ${JSON.stringify(r)}`).toBe('ERROR');
      expectError(r, ['INVALID_ARGUMENT', 'INVALID_CONTENT', 'INVALID_PATH', 'CONTENT_TOO_LARGE']);
      expect(await snapshotDb(name), `${label}: the store changed`).toEqual(before);
    }
  });

  it('a file over 64 MB is refused in a sentence, and nothing changes', async () => {
    const md = await exportToCorrupt();
    const { mem, name } = await nonEmptyTarget();
    const before = await snapshotDb(name);
    // A good export with blank lines after it: only its size is wrong.
    const huge = md + '\n'.repeat(65 * 1024 * 1024);
    const r = await mem.importMarkdown(huge);
    expectError(r, 'INVALID_CONTENT');
    expect((r as { message: string }).message).toBe(
      'Nothing was imported; nothing changed. The Markdown file is 65 MB: a backup or Markdown file of this app is imported up to 64 MB at a time, as much as a browser tab can hold while it reads and indexes it. Split it into smaller files (in a backup, each chat with its messages) and import them one after the other.',
    );
    expect(await snapshotDb(name)).toEqual(before);
  });

  it('a non-string is an error and changes nothing', async () => {
    const { mem, name } = await nonEmptyTarget();
    const before = await snapshotDb(name);
    for (const v of [42, null, undefined, { text: '# A' }]) {
      const r = await mem.importMarkdown(v);
      expect(r).toMatchObject({ status: 'ERROR' });
      expect((r as { message: string }).message.length).toBeGreaterThan(0);
    }
    expect(await snapshotDb(name)).toEqual(before);
  });
});

describe('markdown import into a non-empty database', () => {
  it('merges: new entries created, existing ones updated with history, others untouched', async () => {
    const src = openTestMemory();
    ok(await src.mem.saveMemory('Shared/Entry', { from: 'import' }, 0));
    ok(await src.mem.saveMemory('Only/InFile', 'new from the file', 0));
    const md = await exportText(src.mem);

    const dst = openTestMemory();
    ok(await dst.mem.saveMemory('Local/Entry', 'local only', 0));
    ok(await dst.mem.saveMemory('Shared/Entry', { from: 'local' }, 0));
    const localBefore = (await entries(dst.name)).find((r) => r.path === 'Local/Entry');

    const r = ok(await dst.mem.importMarkdown(md));
    expect(r).toMatchObject({ imported: 2, created: 1, updated: 1 });

    const rows = await entries(dst.name);
    expect(rows.map((x) => x.path)).toEqual(['Local/Entry', 'Only/InFile', 'Shared/Entry']);
    expect(rows.find((x) => x.path === 'Local/Entry')).toEqual(localBefore);
    expect(ok(await dst.mem.queryMemory('Only/InFile')).content).toBe('new from the file');
    expect(ok(await dst.mem.queryMemory('Shared/Entry')).content).toEqual({ from: 'import' });
    const h = ok(await dst.mem.getHistory('Shared/Entry'));
    expect(h.versions.map((v) => v.content)).toContainEqual({ from: 'local' });

    // The same file again: every entry holds its content already, so nothing is written.
    const again = ok(await dst.mem.importMarkdown(md));
    expect(again).toMatchObject({ imported: 2, created: 0, updated: 0, unchanged: 2 });
    expect(await entries(dst.name)).toEqual(rows);
    expect(ok(await dst.mem.getHistory('Shared/Entry')).versions).toHaveLength(h.versions.length);
  });
});
