// A reactive controller that reloads data whenever the memory database changes, in this tab or
// any other (Dexie broadcasts every committed write, the worker's included, as 'storagemutated').
// The data itself comes from the worker; this only says when to fetch again.
import Dexie from 'dexie';
import type { ObservabilitySet } from 'dexie';
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { DEFAULT_DB_NAME } from '../memory/db';

export type MemoryTable =
  'structured_memory' | 'conversations' | 'messages' | 'chunks' | 'history' | 'settings';

export interface WatchOptions<T> {
  /** Tables whose writes trigger a reload. */
  tables: readonly MemoryTable[];
  /** Loads the data (usually through the worker proxy). */
  load: () => Promise<T>;
  /** Database name (default `structured-memory`). */
  dbName?: string;
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
  private readonly prefixes: string[];

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly options: WatchOptions<T>,
  ) {
    const db = options.dbName ?? DEFAULT_DB_NAME;
    this.prefixes = options.tables.map((t) => `idb://${db}/${t}/`);
    host.addController(this);
  }

  hostConnected(): void {
    Dexie.on('storagemutated', this.onMutated);
    void this.reload();
  }

  hostDisconnected(): void {
    Dexie.on('storagemutated').unsubscribe(this.onMutated);
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

  private readonly onMutated = (parts: ObservabilitySet) => {
    if (!Object.keys(parts).some((p) => this.prefixes.some((x) => p.startsWith(x)))) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reload(), this.options.debounceMs ?? 60);
  };
}
