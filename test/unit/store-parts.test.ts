// The pure parts of an open memory (src/memory/tool-helpers.ts, live-indexes.ts): the guard's
// results, path arguments, history rows, and how a write report's keys are read.
import type { IntervalTree } from 'dexie';
import { describe, expect, it } from 'vitest';
import { collectKeys } from '../../src/memory/live-indexes';
import { entryText, guarded, historyRow, pathArg } from '../../src/memory/tool-helpers';
import type { MemoryEntry } from '../../src/memory/types';

describe('guarded', () => {
  it('passes a result through', async () => {
    expect(
      await guarded(
        () => false,
        async () => 7,
      ),
    ).toBe(7);
  });

  it('refuses once the memory is closed, without running the body', async () => {
    let ran = false;
    const r = await guarded(
      () => true,
      async () => (ran = true),
    );
    expect(r).toMatchObject({ status: 'ERROR', code: 'INTERNAL_ERROR' });
    expect(ran).toBe(false);
  });

  it('a full disk, even inside an AbortError, is STORAGE_FULL', async () => {
    const quota = Object.assign(new Error('abort'), {
      name: 'AbortError',
      inner: { name: 'QuotaExceededError' },
    });
    const r = await guarded(
      () => false,
      async () => {
        throw quota;
      },
    );
    expect(r).toMatchObject({ status: 'ERROR', code: 'STORAGE_FULL' });
  });

  it('anything else thrown is INTERNAL_ERROR, saying nothing was written', async () => {
    const r = await guarded(
      () => false,
      async () => {
        throw new Error('disk on fire');
      },
    );
    expect(r).toMatchObject({ status: 'ERROR', code: 'INTERNAL_ERROR' });
    expect((r as { message: string }).message).toMatch(/nothing was written: disk on fire/);
  });
});

describe('pathArg', () => {
  it('normalises a path', () => {
    expect(pathArg(' A / B ')).toBe('A/B');
  });

  it('names the argument when it is not `path`', () => {
    expect(pathArg('', false, 'to')).toMatchObject({ code: 'INVALID_PATH' });
    expect((pathArg('', false, 'to') as { message: string }).message).toMatch(/^to: /);
  });

  it('takes the root only when allowed', () => {
    expect(pathArg('', true)).toBe('');
    expect(pathArg('')).toMatchObject({ code: 'INVALID_PATH' });
  });
});

it("entryText: the path's words, then the content's text", () => {
  expect(entryText('User/PreferDark', { theme: 'dark' })).toMatch(/^User Prefer Dark\. .*dark/);
});

it('historyRow keeps the entry without its id', () => {
  const at = new Date(5);
  const row = { id: 3, path: 'A/B', version: 2, content: 'x' } as unknown as MemoryEntry;
  expect(historyRow(row, 'update', at)).toEqual({
    path: 'A/B',
    version: 2,
    reason: 'update',
    replaced: at,
    entry: { path: 'A/B', version: 2, content: 'x' },
  });
});

describe('collectKeys', () => {
  it('gathers single keys', () => {
    const tree = {
      from: 2,
      to: 2,
      l: { from: 1, to: 1 },
      r: { from: 5, to: 5 },
    } as unknown as IntervalTree;
    const into = new Set<number>();
    expect(collectKeys(tree, into)).toBe(true);
    expect([...into].sort()).toEqual([1, 2, 5]);
  });

  it('a real range (a bulk write, a clear) asks for a reload', () => {
    const tree = { from: 1, to: 9 } as unknown as IntervalTree;
    expect(collectKeys(tree, new Set())).toBe(false);
  });
});
