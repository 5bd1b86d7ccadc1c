// The change feed on the page (src/ui/memory-watch.ts, src/ui/entry-detail-model.ts): a view
// patches on the next frame, or as the report arrives when its patch costs nothing (the detail),
// and a report that comes during a read is taken when the read ends; an entry's detail is brought
// up to date from the detail the report carries (the worker reads the detail the page shows into
// the reports that touch it), and read again only without one.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { EntryDetail, MemoryChange } from '../../src/memory/types';
import { changeTouches } from '../../src/memory/change-feed';
import { MemoryWatch, RELOAD, reportMemoryChange } from '../../src/ui/memory-watch';
import { detailOf, patchDetail, type Detail } from '../../src/ui/entry-detail-model';

function host(): ReactiveControllerHost & { controllers: ReactiveController[]; updates: number } {
  return {
    controllers: [],
    updates: 0,
    addController(c) {
      this.controllers.push(c);
    },
    removeController() {},
    requestUpdate() {
      this.updates++;
    },
    updateComplete: Promise.resolve(true),
  };
}

const save = (path: string, details?: EntryDetail[]): MemoryChange => ({
  tables: ['structured_memory', 'history'],
  entries: {
    upserted: [{ path, version: 2, created: 0, modified: 1, accessed: 1, size: 5, chunks: 0 }],
    removed: [],
  },
  history: { paths: [path] },
  ...(details ? { details } : {}),
});

const t0 = new Date('2026-01-01T00:00:00Z');

const entryDetail = (path: string, content: string, version: number): EntryDetail => ({
  status: 'SUCCESS',
  path,
  kind: 'entry',
  entry: {
    path,
    content,
    contextChunks: [],
    model: 'm',
    created: t0,
    modified: t0,
    accessed: t0,
    version,
  },
  sources: {},
  history: [],
  below: [],
  children: [],
  totalChildren: 0,
});

/** Lets the promises and timers queued so far run (real timers). */
const settle = () => new Promise((r) => setTimeout(r, 0));

/** A watch of the detail at `path`, counting its reads; each read waits for `answer`. */
function detailWatch(path: string, patchOnReport = true) {
  const h = host();
  let reads = 0;
  let answer: ((v: Detail) => void) | undefined;
  const watch = new MemoryWatch<Detail | undefined>(h, {
    tables: ['structured_memory', 'history'],
    load: () => {
      reads++;
      return new Promise<Detail>((resolve) => (answer = resolve));
    },
    patch: patchDetail,
    patchOnReport,
  });
  return {
    h,
    watch,
    reads: () => reads,
    answer: (content: string, version = 1) =>
      answer?.(detailOf(path, entryDetail(path, content, version))),
    connect: () => h.controllers.forEach((c) => c.hostConnected?.()),
    disconnect: () => h.controllers.forEach((c) => c.hostDisconnected?.()),
  };
}

let open: { disconnect: () => void }[] = [];
afterEach(() => {
  open.forEach((w) => w.disconnect());
  open = [];
  vi.useRealTimers();
});

const contentOf = (d: Detail | undefined) => (d?.kind === 'entry' ? d.entry.content : undefined);

describe('patchDetail', () => {
  const shown = detailOf('Travel/Lisbon', entryDetail('Travel/Lisbon', 'old', 1));

  it('takes the detail the report carries for its path, without a read', () => {
    const next = patchDetail(
      shown,
      save('Travel/Lisbon', [entryDetail('Travel/Lisbon', 'new', 2)]),
    );
    expect(next).not.toBe(RELOAD);
    expect(contentOf(next as Detail)).toBe('new');
    expect(next !== RELOAD && next?.kind === 'entry' && next.entry.metadata.version).toBe(2);
  });

  it('reads again when the report touched its path but carries no detail of it', () => {
    expect(patchDetail(shown, save('Travel/Lisbon'))).toBe(RELOAD);
    expect(patchDetail(shown, save('Travel/Lisbon', [entryDetail('Travel/Porto', 'x', 1)]))).toBe(
      RELOAD,
    );
    // A report that cannot say which rows changed.
    expect(patchDetail(shown, { tables: ['structured_memory'] })).toBe(RELOAD);
  });

  it('stays as it is when the write was elsewhere', () => {
    expect(patchDetail(shown, save('Travel/Porto'))).toBe(shown);
    expect(patchDetail(shown, { tables: ['messages'], messages: { ids: [1] } })).toBe(shown);
    expect(changeTouches(save('Travel/Lisbon/Hotel'), 'Travel/Lisbon')).toBe(true);
  });

  it('a path moved away from reads again on any entry write (its moves may go on)', () => {
    const moved: Detail = {
      kind: 'missing',
      path: 'Old',
      moved: { to: 'New', live: true },
      history: [],
      descendants: 0,
      below: [],
      children: [],
      totalChildren: 0,
    };
    expect(patchDetail(moved, save('Elsewhere'))).toBe(RELOAD);
    expect(patchDetail(moved, { tables: ['conversations'] })).toBe(moved);
  });
});

describe('MemoryWatch with the detail', () => {
  it('a report carrying the detail is shown as it arrives, with no read and no frame first', async () => {
    const w = detailWatch('A');
    open.push(w);
    w.connect();
    w.answer('v1');
    await settle();
    expect(contentOf(w.watch.value)).toBe('v1');
    vi.useFakeTimers(); // no frame (nor timer) runs unless the test says so
    const updates = w.h.updates;
    reportMemoryChange(save('A', [entryDetail('A', 'v2', 2)]));
    expect(contentOf(w.watch.value)).toBe('v2');
    expect(w.h.updates).toBe(updates + 1);
    expect(w.reads()).toBe(1);
  });

  it('a report without it reads again at once', async () => {
    const w = detailWatch('A');
    open.push(w);
    w.connect();
    w.answer('v1');
    await settle();
    vi.useFakeTimers();
    reportMemoryChange(save('A'));
    expect(w.reads()).toBe(2);
  });

  it('a view that patches on frames waits for the next one', async () => {
    const w = detailWatch('A', false);
    open.push(w);
    w.connect();
    w.answer('v1');
    await settle();
    vi.useFakeTimers();
    reportMemoryChange(save('A', [entryDetail('A', 'v2', 2)]));
    expect(contentOf(w.watch.value)).toBe('v1');
    vi.runOnlyPendingTimers(); // Node has no animation frames: the next frame is a timer
    expect(contentOf(w.watch.value)).toBe('v2');
    expect(w.reads()).toBe(1);
  });

  it('a report during a read is taken when the read ends: one more read, not one per report', async () => {
    const w = detailWatch('A');
    open.push(w);
    w.connect();
    reportMemoryChange(save('A'));
    reportMemoryChange(save('A'));
    await settle(); // the frames pass while the read is out
    expect(w.reads()).toBe(1);
    w.answer('old');
    await settle();
    expect(w.reads()).toBe(2); // the read the reports asked for
    w.answer('new');
    await settle();
    expect(contentOf(w.watch.value)).toBe('new');
    expect(w.reads()).toBe(2);
  });
});
