// A reactive controller that reloads data whenever the memory database changes, in this tab or
// any other. The memory worker says which tables changed (`followMemoryChanges`), and only once
// its engine has taken the write into account: the page never watches the database itself,
// since its copy of Dexie's cross-tab broadcast can arrive before the worker's, and a read sent
// then is answered from the worker's indexes as they were before the write (another tab's save
// would then never show here). The data itself comes from the worker; this only says when to
// fetch again.
import { proxy } from 'comlink';
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { MemoryClient } from '../worker-client';

export type MemoryTable =
  'structured_memory' | 'conversations' | 'messages' | 'chunks' | 'history' | 'settings';

type ChangeListener = (tables: ReadonlySet<string>) => void;

const listeners = new Set<ChangeListener>();
const followed = new WeakSet<MemoryClient>();

/** Tells every watcher that these tables changed (the worker's report; harnesses call it too). */
export function notifyMemoryChange(tables: Iterable<string>): void {
  const changed = new Set(tables);
  for (const listener of listeners) listener(changed);
}

/**
 * Follows the changes that the worker behind `memory` reports (once per client). Call it before
 * the first load through that client: the subscription reaches the worker first, so no write
 * falls between a load and the first report.
 */
export function followMemoryChanges(memory: MemoryClient): Promise<void> {
  if (followed.has(memory)) return Promise.resolve();
  followed.add(memory);
  return memory.onMemoryChange(proxy((tables: string[]) => notifyMemoryChange(tables)));
}

// A page restored from the back/forward cache may have missed reports while it was frozen.
globalThis.addEventListener?.('pageshow', (event) => {
  if (event.persisted) {
    notifyMemoryChange(['structured_memory', 'conversations', 'messages', 'chunks', 'history']);
  }
});

export interface WatchOptions<T> {
  /** Tables whose writes trigger a reload. */
  tables: readonly MemoryTable[];
  /** Loads the data (usually through the worker proxy). */
  load: () => Promise<T>;
  /** Coalesces bursts of writes (default 60 ms). */
  debounceMs?: number;
}

export class MemoryWatch<T> implements ReactiveController {
  /** The latest data; undefined until the first load finishes. */
  value: T | undefined;
  error: unknown;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private loading: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly options: WatchOptions<T>,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    listeners.add(this.onChange);
    void this.reload();
  }

  hostDisconnected(): void {
    listeners.delete(this.onChange);
    clearTimeout(this.timer);
  }

  /** Fetches now (also used when the inputs of `load` change). */
  reload(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.again = false;
        try {
          this.value = await this.options.load();
          this.error = undefined;
        } catch (e) {
          this.error = e;
        }
      } while (this.again);
      this.loading = undefined;
      this.host.requestUpdate();
    })();
    return this.loading;
  }

  private readonly onChange = (tables: ReadonlySet<string>) => {
    if (!this.options.tables.some((t) => tables.has(t))) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reload(), this.options.debounceMs ?? 60);
  };
}
