// Two open connections to one database (two tabs): concurrent saves never lose an update and
// every overwritten version lands in history exactly once.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  Clock,
  closeAll,
  gatedEmbedder,
  ok,
  openTestMemory,
  sharedEmbedder,
  tableRows,
} from './helpers';

beforeAll(async () => {
  await sharedEmbedder().ready();
});
afterEach(closeAll);

describe('two connections to the same database', () => {
  it('100 interleaved saves of one path: version 100, history holds 1..99 exactly once', async () => {
    const clock = new Clock();
    const tabA = openTestMemory({ clock });
    const tabB = openTestMemory({ name: tabA.name, clock });
    const path = 'HaloWeave/Goals/MultiWindowSupport';

    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 50; i++) {
      calls.push(tabA.mem.saveMemory(path, { tab: 'A', i }, 0));
      calls.push(tabB.mem.saveMemory(path, { tab: 'B', i }, 0));
    }
    const results = (await Promise.all(calls)).map((r) =>
      ok(r as Awaited<ReturnType<typeof tabA.mem.saveMemory>>),
    );

    // Each save got its own version number.
    expect(results.map((r) => r.version).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 100 }, (_, i) => i + 1),
    );

    for (const mem of [tabA.mem, tabB.mem]) {
      const q = ok(await mem.queryMemory(path));
      expect(q.metadata.version).toBe(100);
    }

    const h = ok(await tabB.mem.getHistory(path));
    expect(h.versions.map((v) => v.version).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 99 }, (_, i) => i + 1),
    );

    // No save was lost: the 99 history contents plus the live one are the 100 saved contents.
    const live = ok(await tabA.mem.queryMemory(path)).content;
    const seen = [...h.versions.map((v) => v.content), live].map((c) => JSON.stringify(c));
    const expected = new Set<string>();
    for (let i = 0; i < 50; i++) {
      expected.add(JSON.stringify({ tab: 'A', i }));
      expected.add(JSON.stringify({ tab: 'B', i }));
    }
    expect(new Set(seen)).toEqual(expected);
    expect(seen).toHaveLength(100);

    // And each version holds the content of the save that was given that version number.
    const byVersion = new Map(h.versions.map((v) => [v.version, JSON.stringify(v.content)]));
    byVersion.set(100, JSON.stringify(live));
    results.forEach((r, k) => {
      const i = Math.floor(k / 2);
      const tab = k % 2 === 0 ? 'A' : 'B';
      expect(byVersion.get(r.version)).toBe(JSON.stringify({ tab, i }));
    });

    const rows = await tableRows<{ path: string }>(tabA.name, 'structured_memory');
    expect(rows.filter((r) => r.path === path)).toHaveLength(1);
  });

  it('concurrent saves of different paths from two connections all land', async () => {
    const tabA = openTestMemory();
    const tabB = openTestMemory({ name: tabA.name });
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 25; i++) {
      calls.push(tabA.mem.saveMemory(`Shared/A${i}`, i, 0));
      calls.push(tabB.mem.saveMemory(`Shared/B${i}`, i, 0));
    }
    for (const r of await Promise.all(calls)) expect(r).toMatchObject({ status: 'SUCCESS' });
    const list = ok(await tabA.mem.listMemory('Shared'));
    expect(list.totalEntries).toBe(50);
    expect(ok(await tabB.mem.queryMemory('Shared/A24')).content).toBe(24);
  });

  it('a write in one connection is visible to the other at once', async () => {
    const tabA = openTestMemory();
    const tabB = openTestMemory({ name: tabA.name });
    ok(await tabA.mem.saveMemory('Notes/Shared', 'from A', 0));
    expect(ok(await tabB.mem.queryMemory('Notes/Shared')).content).toBe('from A');
    ok(await tabB.mem.deleteMemory('Notes/Shared'));
    expect((await tabA.mem.queryMemory('Notes/Shared')).status).toBe('NOT_FOUND');
  });
});

describe('a write that lands while another is being prepared', () => {
  it('a save whose content is saved meanwhile (another tab, the keeper) makes no second version', async () => {
    const g = gatedEmbedder(sharedEmbedder(), 'GATE', { armed: false });
    const { mem } = openTestMemory({ embedder: g.embedder });
    ok(await mem.saveMemory('P', 'before', 0));
    g.arm();
    const save = mem.saveMemory('P', 'GATE: after', 0);
    await g.atGate;
    ok(await mem.saveMemory('P', 'GATE: after', 0));
    g.release();
    expect(await save).toMatchObject({ status: 'SUCCESS', version: 2, unchanged: true });
    expect(ok(await mem.getHistory('P')).versions.map((v) => v.content)).toEqual(['before']);
  });

  it('updateMemory after a save of something that is no object: refused, the save stands', async () => {
    const g = gatedEmbedder(sharedEmbedder(), 'GATE', { armed: false });
    const { mem } = openTestMemory({ embedder: g.embedder });
    ok(await mem.saveMemory('P', { a: 1 }, 0));
    g.arm();
    const update = mem.updateMemory('P', { GATE: 'y' });
    await g.atGate;
    ok(await mem.saveMemory('P', 'now a plain string', 0));
    g.release();
    expect(await update).toMatchObject({ status: 'ERROR', code: 'INVALID_CONTENT' });
    expect(ok(await mem.queryMemory('P')).content).toBe('now a plain string');
  });

  it('updateMemory whose merge with a save meanwhile is too large: refused, nothing stored over the limit', async () => {
    const g = gatedEmbedder(sharedEmbedder(), 'GATE', { armed: false });
    const { mem } = openTestMemory({ embedder: g.embedder });
    ok(await mem.saveMemory('P', { a: 1 }, 0));
    g.arm();
    const update = mem.updateMemory('P', { GATE: 'y'.repeat(20_000) });
    await g.atGate;
    ok(await mem.saveMemory('P', { pad: 'x'.repeat(20_000) }, 0));
    g.release();
    expect(await update).toMatchObject({ status: 'ERROR' });
    expect(ok(await mem.queryMemory('P')).content).toEqual({ pad: 'x'.repeat(20_000) });
    const backup = await mem.exportJson();
    if (typeof backup !== 'string') throw new Error(backup.message);
    expect(await mem.checkBackup(backup)).toEqual({ status: 'SUCCESS' });
  });

  it('moveMemory after a save below it that would be too deep once moved: refused, nothing moved', async () => {
    const g = gatedEmbedder(sharedEmbedder(), 'GATE', { armed: false });
    const { mem } = openTestMemory({ embedder: g.embedder });
    ok(await mem.saveMemory('A', 'GATE', 0));
    g.arm();
    const move = mem.moveMemory('A', 'X/Y/Z');
    await g.atGate;
    const deep = `A/${Array.from({ length: 10 }, (_, i) => `s${i}`).join('/')}`;
    ok(await mem.saveMemory(deep, 'deep one', 0));
    g.release();
    expect(await move).toMatchObject({ status: 'ERROR', code: 'INVALID_PATH' });
    expect(ok(await mem.queryMemory(deep)).content).toBe('deep one');
    expect(ok(await mem.queryMemory('A')).content).toBe('GATE');
  });
});
