// The worker's tsconfig (not this folder's owner) lists no .d.ts here; the reference brings it in.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./pouchdb-browser.d.ts" />
// The sync engine as the memory worker runs it (docs/sync.md): pouchdb-browser (IndexedDB mirror,
// http replication), a CORS probe, and arrivals embedded by the worker's engine.
import PouchDB from 'pouchdb-browser';
import type { MemoryApi, ReembedProgress } from '../memory/types';
import { indexArrivals } from './arrivals';
import { checkServer, type CheckTarget, type ServerCheck } from './check';
import { createSync } from './engine';

/** A label for this browser in conflict records, e.g. "Chrome on Linux". */
export function deviceLabel(userAgent: string): string {
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(userAgent)
        ? 'Chrome'
        : /Safari\//.test(userAgent)
          ? 'Safari'
          : 'A browser';
  const os = /Android/.test(userAgent)
    ? 'Android'
    : /iPhone|iPad/.test(userAgent)
      ? 'iOS'
      : /Windows/.test(userAgent)
        ? 'Windows'
        : /Mac OS X/.test(userAgent)
          ? 'macOS'
          : /Linux/.test(userAgent)
            ? 'Linux'
            : '';
  return os ? `${browser} on ${os}` : browser;
}

/**
 * Whether `url` answers at all when CORS is not asked for: an opaque answer means the server is
 * up but does not let this page read it.
 */
async function probe(url: string): Promise<boolean | 'unknown'> {
  // Cross-origin isolated (COEP require-corp), an opaque answer is blocked like a refused
  // connection: the two cannot be told apart.
  if (self.crossOriginIsolated) return 'unknown';
  try {
    await fetch(url, { mode: 'no-cors', cache: 'no-store' });
    return true;
  } catch {
    return false;
  }
}

/** Settings → Sync's Check server, from this worker (its origin and isolation are the sync's). */
export function checkSyncServer(target: CheckTarget): Promise<ServerCheck> {
  return checkServer(target, { fetch: self.fetch.bind(self), origin: self.location.origin, probe });
}

export function createBrowserSync(
  memory: () => Pick<MemoryApi, 'recordTurn' | 'reembed'>,
  onEmbedding?: (p: ReembedProgress) => void,
) {
  return createSync({
    Pouch: (name, options) => new PouchDB(name, options),
    device: deviceLabel(self.navigator.userAgent),
    origin: self.location.origin,
    probe,
    onArrived: (arrived, progress) =>
      indexArrivals(memory(), arrived, (p) => {
        progress(p);
        onEmbedding?.(p);
      }),
    // Every tab's worker runs an engine on the same databases: one reconciles at a time.
    exclusive: async (body) => {
      if (self.navigator.locks) await self.navigator.locks.request('structured-memory-sync', body);
      else await body();
    },
  });
}
