// The change feed's controller (src/ui/memory-watch.ts): a view whose patch only decides whether
// to read again (the entry detail) sends its read as the report arrives, not a frame later; the
// others patch on the next frame. A read under way takes the report when it ends.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { MemoryChange } from '../../src/memory/types';
import { MemoryWatch, RELOAD, changeTouches, reportMemoryChange } from '../../src/ui/memory-watch';

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

const save = (path: string): MemoryChange => ({
  tables: ['structured_memory'],
  entries: {
    upserted: [{ path, version: 2, created: 0, modified: 1, accessed: 1, size: 5, chunks: 0 }],
    removed: [],
  },
});

/** A watch of the entry at `path` as the detail keeps it, counting its reads. */
function detailWatch(path: string, decideOnReport: boolean) {
  const h = host();
  let reads = 0;
  let answer: ((v: string) => void) | undefined;
  const watch = new MemoryWatch<string>(h, {
    tables: ['structured_memory'],
    load: () => {
      reads++;
      return new Promise<string>((resolve) => (answer = resolve));
    },
    patch: (v, change) => (changeTouches(change, path) ? RELOAD : v),
    decideOnReport,
  });
  return {
    h,
    watch,
    reads: () => reads,
    answer: (v: string) => answer?.(v),
    connect: () => h.controllers.forEach((c) => c.hostConnected?.()),
    disconnect: () => h.controllers.forEach((c) => c.hostDisconnected?.()),
  };
}

/** Lets the promises and timers queued so far run (real timers). */
const settle = () => new Promise((r) => setTimeout(r, 0));

let open: { disconnect: () => void }[] = [];
afterEach(() => {
  open.forEach((w) => w.disconnect());
  open = [];
  vi.useRealTimers();
});

describe('MemoryWatch', () => {
  it('reads again as a report on its path arrives, with no frame between', async () => {
    const w = detailWatch('Travel/Lisbon', true);
    open.push(w);
    w.connect();
    expect(w.reads()).toBe(1);
    w.answer('v1');
    await settle();
    expect(w.watch.value).toBe('v1');

    vi.useFakeTimers(); // no frame (nor timer) runs unless the test says so
    reportMemoryChange(save('Travel/Lisbon'));
    expect(w.reads()).toBe(2);
    reportMemoryChange(save('Travel/Porto')); // not its path: nothing to read
    expect(w.reads()).toBe(2);
  });

  it('a report during a read is taken when the read ends: one more read, not one per report', async () => {
    const w = detailWatch('A', true);
    open.push(w);
    w.connect();
    reportMemoryChange(save('A'));
    reportMemoryChange(save('A'));
    expect(w.reads()).toBe(1);
    w.answer('old');
    await settle();
    expect(w.reads()).toBe(2); // the read the reports asked for
    w.answer('new');
    await settle();
    expect(w.watch.value).toBe('new');
    expect(w.reads()).toBe(2);
  });

  it('without it, the patch waits for the next frame', async () => {
    const w = detailWatch('A', false);
    open.push(w);
    w.connect();
    w.answer('v1');
    await settle();
    expect(w.watch.value).toBe('v1');
    vi.useFakeTimers();
    reportMemoryChange(save('A'));
    expect(w.reads()).toBe(1);
    vi.runOnlyPendingTimers(); // Node has no animation frames: the next frame is a timer
    expect(w.reads()).toBe(2);
  });
});
