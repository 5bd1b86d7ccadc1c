// Page side of the worker boundary: starts the memory worker and hands out its typed proxy.
import { releaseProxy, wrap, type Remote } from 'comlink';
import type { MemoryWorkerApi } from '../workers/memory.worker';

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
  const worker = new Worker(new URL('../workers/memory.worker.ts', import.meta.url), {
    type: 'module',
    name: 'structured-memory',
  });
  worker.addEventListener('error', (event) => {
    options.onError?.(event.message || 'The memory worker failed to start.');
  });
  const memory = wrap<MemoryWorkerApi>(worker);
  return {
    memory,
    terminate() {
      memory[releaseProxy]();
      worker.terminate();
    },
  };
}
