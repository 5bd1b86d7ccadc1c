// The memory worker: owns the engine (Dexie + embeddings) off the main thread and exposes it
// with Comlink. The page imports only `MemoryWorkerApi` (a type), never this module's code.
import { expose } from 'comlink';
import Dexie, { type ObservabilitySet } from 'dexie';
import type { EmbedderProgress } from '../src/embeddings/types';
import { BUNDLED_MODEL, DEFAULT_MODEL, createEmbedder, openMemory } from '../src/memory';
import { DEFAULT_DB_NAME } from '../src/memory/db';
import { mutatedKeys } from '../src/memory/live-indexes';
import { changeTouches } from '../src/memory/change-feed';
import type {
  EntryDetail,
  IndexProgress,
  MemoryApi,
  MemoryChange,
  ReembedProgress,
  ToolError,
} from '../src/memory/types';
import { checkSyncServer, createBrowserSync } from '../src/sync/browser';
import type { CheckTarget, ServerCheck } from '../src/sync/check';
import type { SyncConfig, SyncStatus } from '../src/sync/engine';
import { keepErrorCodes } from '../src/worker-errors';

export type ModelChoice = 'default' | 'bundled';

/**
 * The model a build uses before the user picks one: `VITE_EMBEDDING_MODEL` (`bundled` or a
 * model id) at build time, else the hub model with offline fallback. Never a URL parameter.
 */
function buildDefaultModel(): string {
  const value: unknown = import.meta.env.VITE_EMBEDDING_MODEL;
  if (typeof value !== 'string' || value.trim() === '') return DEFAULT_MODEL;
  return value.trim() === 'bundled' ? BUNDLED_MODEL : value.trim();
}

/**
 * The portable single file carries the bundled model inside and hands its copies over as blob:
 * URLs in this global, set before this script runs (scripts/build-portable.ts).
 */
const portableModelFiles = (self as { SM_BUNDLED_FILES?: Record<string, string> }).SM_BUNDLED_FILES;

/**
 * Tells `listener` (one of `listeners`) `value`; a listener from a closed page rejects and is
 * dropped, rather than fail the work that reports.
 */
function tell<T>(listeners: Set<(value: T) => void>, listener: (value: T) => void, value: T): void {
  Promise.resolve(listener(value)).catch(() => listeners.delete(listener));
}

function createWorkerApi() {
  const progressListeners = new Set<(progress: EmbedderProgress) => void>();
  // Replayed to late subscribers: the fallback notice, then the latest step.
  let fallback: EmbedderProgress | undefined;
  let lastProgress: EmbedderProgress | undefined;

  // A rebuild of the chat index under way (replayed to a page that subscribes during it).
  const indexListeners = new Set<(progress: IndexProgress) => void>();
  let indexing: IndexProgress | undefined;
  const onIndexProgress = (progress: IndexProgress) => {
    indexing = progress.done < progress.total ? progress : undefined;
    for (const listener of indexListeners) tell(indexListeners, listener, progress);
  };

  const open = (model: string | (() => Promise<string>)): MemoryApi =>
    openMemory({
      onIndexProgress,
      embedder: createEmbedder({
        model,
        bundledFiles: portableModelFiles,
        onProgress(progress: EmbedderProgress) {
          if (progress.status === 'fallback') fallback = progress;
          lastProgress = progress;
          for (const listener of progressListeners) tell(progressListeners, listener, progress);
        },
      }),
    });

  // The first engine loads the model chosen in Settings (stored by the page as 'app'), read from
  // the database before any model loads: with the bundled model chosen, no start loads the
  // default model, transformers.js or the ONNX runtime first (docs/bundled-model.md).
  let memory: MemoryApi = open(() => storedModel);
  const storedModel = (async (): Promise<string> => {
    try {
      const app = (await memory.getSetting('app')) as { embeddingModel?: unknown } | undefined;
      return app?.embeddingModel === 'bundled' ? BUNDLED_MODEL : buildDefaultModel();
    } catch {
      return buildDefaultModel();
    }
  })();
  /** The model of the current engine. */
  let modelId: Promise<string> = storedModel;

  // Committed writes, from this worker or any other tab's, as Dexie reports them here. The
  // engine notes the same report (in the same dispatch); the feed then asks it what the writes
  // changed, which it answers once its indexes hold them, so the page hears of a write only
  // when a read it sends then sees it. Reports go out one at a time, in the order of the writes.
  const changeListeners = new Set<(change: MemoryChange) => void>();
  /** The detail the page shows (`entryDetail` with `watch`), and its child limit. */
  let watched: { path: string; childLimit?: number } | undefined;
  let feed: Promise<void> = Promise.resolve();
  Dexie.on('storagemutated', (parts: ObservabilitySet) => {
    if (!changeListeners.size) return;
    const keys = mutatedKeys(parts, DEFAULT_DB_NAME);
    const tables = Object.keys(keys);
    if (!tables.length) return;
    feed = feed.then(async () => {
      let change: MemoryChange = { tables };
      try {
        change = { tables, ...(await memory.describeChanges(keys)) };
        // The watched details this change touched go with it, read now that it is in: the
        // page's detail shows the write without a read of its own (one fewer round trip).
        const shown = watched;
        if (shown && changeTouches(change, shown.path)) {
          const detail = await memory.entryDetail(shown.path, { childLimit: shown.childLimit });
          if (detail.status === 'SUCCESS') change.details = [detail];
        }
      } catch {
        // Not described (the engine closed under it): the views load again in full.
      }
      for (const listener of changeListeners) {
        // A listener from a closed page rejects; drop it.
        Promise.resolve(listener(change)).catch(() => changeListeners.delete(listener));
      }
    });
  });

  // Every engine method, forwarded to the current engine (which changes when the model does):
  // each looks the method up on `memory` when it is called.
  const forward: MemoryApi = new Proxy(memory, {
    get:
      (_first, name) =>
      (...args: unknown[]) =>
        Reflect.apply(Reflect.get(memory, name) as (...a: unknown[]) => unknown, memory, args),
  });

  // Sync with a CouchDB server (docs/sync.md): arrivals are embedded by the engine in use.
  const sync = createBrowserSync(() => memory);
  void sync.start();

  return {
    ...forward,

    /** The sync settings saved on this device, if any. */
    syncConfig: (): Promise<SyncConfig | undefined> => sync.getConfig(),
    /** Saves the sync settings on this device and starts or stops live sync to match. */
    configureSync: (config: SyncConfig): Promise<SyncStatus> => sync.configure(config),
    /** Asks the sync server what a first sync needs (Settings → Sync, Check server); writes nothing. */
    checkSyncServer: (target: CheckTarget): Promise<ServerCheck> => checkSyncServer(target),
    /** Pull, reconcile and push once. */
    syncNow: (): Promise<SyncStatus> => sync.syncNow(),
    /** Calls `listener` (a Comlink `proxy()`) with the sync status now and on every change. */
    onSyncStatus(listener: (status: SyncStatus) => void): void {
      sync.onStatus(listener);
    },
    /**
     * Calls `listener` (wrapped in Comlink's `proxy()` by the page) on every model download or
     * load step, starting with the fallback notice (if any) and the latest step seen.
     */
    onModelProgress(listener: (progress: EmbedderProgress) => void): void {
      progressListeners.add(listener);
      if (fallback && fallback !== lastProgress) tell(progressListeners, listener, fallback);
      if (lastProgress) tell(progressListeners, listener, lastProgress);
    },

    /**
     * Calls `listener` (wrapped in Comlink's `proxy()` by the page) as a rebuild of the chat
     * index goes (sentences done of all; done = total at the end), starting with one under way.
     */
    onIndexProgress(listener: (progress: IndexProgress) => void): void {
      indexListeners.add(listener);
      if (indexing) tell(indexListeners, listener, indexing);
    },

    /**
     * Calls `listener` (wrapped in Comlink's `proxy()` by the page) with what a committed write
     * changed (the tables, and per table the rows where they can be told), in this tab, another
     * tab or from sync, once this engine has taken the write in. The page patches or reloads
     * what it shows on these reports, never on its own view of the database.
     */
    onMemoryChange(listener: (change: MemoryChange) => void): void {
      changeListeners.add(listener);
    },

    /**
     * An entry's detail (the engine's `entryDetail`); with `watch`, the page shows it from now on:
     * change reports that touch the path carry it, read after the change (`MemoryChange.details`),
     * until the page reads another detail with `watch` or calls `unwatchDetail`.
     */
    entryDetail(
      path: unknown,
      options: { childLimit?: number; watch?: boolean } = {},
    ): Promise<EntryDetail | ToolError> {
      const { watch, ...rest } = options;
      if (watch && typeof path === 'string') watched = { path, childLimit: rest.childLimit };
      return memory.entryDetail(path, rest);
    },

    /** The page no longer shows `path`'s detail. */
    unwatchDetail(path: string): void {
      if (watched?.path === path) watched = undefined;
    },

    /** The model the user chose ('default' = the build's default, with offline fallback). */
    async useModel(
      choice: ModelChoice,
      onReembed?: (progress: ReembedProgress) => void,
    ): Promise<{ model: string; reembedded: number }> {
      const wanted = choice === 'bundled' ? BUNDLED_MODEL : buildDefaultModel();
      if (wanted !== (await modelId)) {
        const old = memory;
        modelId = Promise.resolve(wanted);
        fallback = undefined;
        memory = open(wanted);
        await old.close();
        // The new engine's change log starts from its own first load: the views load again.
        for (const listener of changeListeners) {
          Promise.resolve(listener({ tables: ['structured_memory'] })).catch(() =>
            changeListeners.delete(listener),
          );
        }
      }
      const info = await memory.modelInfo();
      // Rows of another model (a switch, or a fallback earlier) are re-embedded in the background.
      const stats = await memory.stats();
      if (!stats.stale) return { model: info.id, reembedded: 0 };
      const r = await memory.reembed(onReembed);
      return { model: info.id, reembedded: 'done' in r ? r.done : 0 };
    },
  };
}

/** What the page sees through `wrap<MemoryWorkerApi>()`. */
export type MemoryWorkerApi = ReturnType<typeof createWorkerApi>;

// A thrown error reaches the page with its `code` (ModelUnavailableError's, for one).
keepErrorCodes();
expose(createWorkerApi());
