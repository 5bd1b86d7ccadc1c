// Page side of the worker boundary: starts the memory worker and hands out its typed proxy.
import { releaseProxy, wrap, type Remote } from 'comlink';
import type { MemoryWorkerApi } from '../workers/memory.worker';
import { keepErrorCodes } from './worker-errors';

/** The memory engine as the page sees it: every call is async and crosses to the worker. */
export type MemoryClient = Remote<MemoryWorkerApi>;

export interface MemoryWorkerHandle {
  memory: MemoryClient;
  /** Stops the worker; pending calls never settle. */
  terminate(): void;
}

export interface StartOptions {
  /** Told when the worker script itself fails (it failed to load, or threw at top level). */
  onError?: (message: string) => void;
}

export function startMemoryWorker(options: StartOptions = {}): MemoryWorkerHandle {
  // The worker installs the same handler: a rejection keeps its `code` on the way here.
  keepErrorCodes();
  const worker = new Worker(new URL('../workers/memory.worker.ts', import.meta.url), {
    type: 'module',
    name: 'structured-memory',
  });
  worker.addEventListener('error', (event) => {
    options.onError?.(event.message || 'The memory worker failed to start.');
  });
  const remote = wrap<MemoryWorkerApi>(worker);
  const memory = plainClient(remote);
  return {
    memory,
    terminate() {
      remote[releaseProxy]();
      worker.terminate();
    },
  };
}

/**
 * A Comlink proxy answers every property read with another proxy, so code that probes objects
 * (Lit looks for `_$litDirective$` / `_$litType$` on bound values, `await` looks for `then`)
 * mistakes it for something else. This facade only answers method names, with a function that
 * calls the worker; every other read (symbols, Lit's `_$…` probes, `then`) is undefined.
 */
function plainClient(remote: MemoryClient): MemoryClient {
  const cache = new Map<string, unknown>();
  return new Proxy({} as MemoryClient, {
    get(_target, key) {
      if (typeof key !== 'string' || key.startsWith('_$') || key === 'then') return undefined;
      let fn = cache.get(key);
      if (!fn) {
        const method = (remote as unknown as Record<string, (...args: unknown[]) => unknown>)[key];
        fn = (...args: unknown[]) => method(...args);
        cache.set(key, fn);
      }
      return fn;
    },
  });
}
