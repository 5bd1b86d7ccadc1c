// A full disk in node: fake-indexeddb's writes fail with QuotaExceededError from the Nth write on
// (or at the Nth only), in one of the three ways a browser reports it. Counting writes first
// (`countWrites`) tells how many write steps an operation has, so a case can fail each of them.
//
// Two of the ways reach into fake-indexeddb's transaction internals (`_requests`, `_start`,
// `_abort`), as test/integration/tool-errors.test.ts does for its all-writes-fail simulation.

/** How the failure shows: thrown by put/add, the request's error event, or the commit aborting. */
export type QuotaMode = 'thrown' | 'request' | 'commit';
export const QUOTA_MODES: readonly QuotaMode[] = ['thrown', 'request', 'commit'];

export interface QuotaFault {
  /** 1-based index of the first write that fails. */
  at: number;
  /** Every write from `at` on fails (the disk stays full), or only that one. */
  persistent: boolean;
  mode: QuotaMode;
}

const STORE_WRITES = ['put', 'add', 'delete', 'clear'] as const;
const CURSOR_WRITES = ['update', 'delete'] as const;

type Fn = (this: unknown, ...args: unknown[]) => unknown;

interface FakeTransaction {
  _requests: { request: unknown; operation: () => unknown }[];
  _start: () => void;
  _abort: (name: string | null) => void;
  _state: string;
  __quotaDoomed?: boolean;
}

const quotaError = () => new DOMException('The quota has been exceeded.', 'QuotaExceededError');

/** Wraps every write method of IDBObjectStore and IDBCursor; returns undo. */
function wrapWrites(onWrite: (tx: FakeTransaction, issue: () => unknown) => unknown): () => void {
  const undo: (() => void)[] = [];
  const wrap = (proto: Record<string, Fn>, name: string, txOf: (self: unknown) => unknown) => {
    const original = proto[name];
    proto[name] = function (this: unknown, ...args: unknown[]) {
      return onWrite(txOf(this) as FakeTransaction, () => original.apply(this, args));
    };
    undo.push(() => (proto[name] = original));
  };
  const store = IDBObjectStore.prototype as unknown as Record<string, Fn>;
  for (const m of STORE_WRITES) wrap(store, m, (s) => (s as IDBObjectStore).transaction);
  const cursor = IDBCursor.prototype as unknown as Record<string, Fn>;
  for (const m of CURSOR_WRITES) {
    wrap(cursor, m, (c) => {
      const source = (c as IDBCursor).source as IDBObjectStore | IDBIndex;
      return 'objectStore' in source ? source.objectStore.transaction : source.transaction;
    });
  }
  return () => undo.forEach((f) => f());
}

/** Runs `run` while counting IndexedDB write calls; returns its value and the count. */
export async function countWrites<T>(run: () => Promise<T>): Promise<[T, number]> {
  let writes = 0;
  const undo = wrapWrites((_tx, issue) => {
    writes++;
    return issue();
  });
  try {
    return [await run(), writes];
  } finally {
    undo();
  }
}

/** Runs `run` with the quota exhausted as `fault` says; returns its value and whether it hit. */
export async function withQuotaFault<T>(
  fault: QuotaFault,
  run: () => Promise<T>,
): Promise<[T, boolean]> {
  let writes = 0;
  let hit = false;
  const undo = wrapWrites((tx, issue) => {
    writes++;
    const fails = fault.persistent ? writes >= fault.at : writes === fault.at;
    if (!fails) return issue();
    hit = true;
    switch (fault.mode) {
      case 'thrown':
        throw quotaError();
      case 'request': {
        // The write is queued, then its request fails: the error event aborts the transaction.
        const request = issue();
        const entry = tx._requests.find((r) => r.request === request);
        if (!entry) throw new Error('cannot reach the fake-indexeddb request queue');
        entry.operation = () => {
          throw quotaError();
        };
        return request;
      }
      case 'commit': {
        // Every request succeeds; the transaction aborts when it would commit, as Chromium does
        // when the quota check at commit fails.
        if (!tx.__quotaDoomed) {
          tx.__quotaDoomed = true;
          const start = tx._start;
          tx._start = function (this: FakeTransaction) {
            const pending = this._requests.some(
              (r) => (r.request as { readyState?: string }).readyState !== 'done',
            );
            if (!pending && this._state !== 'finished') this._abort('QuotaExceededError');
            else start.call(this);
          };
        }
        return issue();
      }
    }
  });
  try {
    return [await run(), hit];
  } finally {
    undo();
  }
}
