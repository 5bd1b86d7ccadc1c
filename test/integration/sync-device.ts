// A memory with a sync engine over it, for the sync integration tests (sync.test.ts,
// sync-faults.test.ts): configured for one database of the test server, closed by the caller.
import { indexArrivals } from '../../src/sync/arrivals';
import {
  createSync,
  type SyncConfig,
  type SyncEngine,
  type SyncOptions,
} from '../../src/sync/engine';
import type { MemoryApi } from '../../src/memory/types';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { nodePouchFactory, startSyncServer, type TestSyncServer } from '../sync-server';
import { Clock, closeAll, openTestMemory, sharedEmbedder } from './helpers';

export interface Device {
  mem: MemoryApi;
  sync: SyncEngine;
  clock: Clock;
  name: string;
}

/** Opens a device named `label` on `url`/`database`; its engine is pushed onto `engines`. */
export async function openDevice(options: {
  url: string;
  database: string;
  label: string;
  engines: SyncEngine[];
  clock?: Clock;
  extra?: Partial<SyncConfig>;
  /** Engine options beyond the test defaults. */
  engine?: Partial<SyncOptions>;
}): Promise<Device> {
  const clock = options.clock ?? new Clock();
  const { mem, name } = openTestMemory({ clock });
  const sync = createSync({
    Pouch: nodePouchFactory,
    memoryName: name,
    device: options.label,
    now: clock.now,
    kdfIterations: 2000,
    onArrived: (arrived, progress) => indexArrivals(mem, arrived, progress),
    ...options.engine,
  });
  options.engines.push(sync);
  await sync.configure({
    url: options.url,
    database: options.database,
    username: '',
    password: '',
    encrypt: false,
    passphrase: '',
    live: false,
    ...options.extra,
  });
  return { mem, sync, clock, name };
}

/**
 * A test file's sync server, with its hooks: started before the file's tests (the embedder
 * ready), engines and memories closed after each test, the server closed at the end. A test can
 * have it stop at a request of its choosing (`stopWhen`: the server gone mid-sync).
 */
export function serverForFile(): {
  readonly server: TestSyncServer;
  engines: SyncEngine[];
  stopWhen: (when: ((path: string) => boolean) | null) => void;
} {
  let server: TestSyncServer;
  const engines: SyncEngine[] = [];
  let stopAt: ((path: string) => boolean) | null = null;
  beforeAll(async () => {
    server = await startSyncServer({
      onRequest(req) {
        if (stopAt?.(req.path)) {
          stopAt = null;
          void server.stop();
          throw new Error('gone');
        }
      },
    });
    await sharedEmbedder().ready();
  });
  afterAll(async () => {
    await server.close();
  });
  afterEach(async () => {
    stopAt = null;
    await Promise.all(engines.splice(0).map((e) => e.close()));
    await closeAll();
  });
  return {
    get server() {
      return server;
    },
    engines,
    stopWhen: (when) => void (stopAt = when),
  };
}

/** One Sync now that must succeed, then what arrived embedded; its status. */
export async function synced(d: Device) {
  const s = await d.sync.syncNow();
  expect(s.error).toBeNull();
  await d.sync.idle();
  return s;
}

/** Each chat's messages' texts, by its title. */
export async function chatTexts(mem: MemoryApi) {
  const out: Record<string, string[]> = {};
  for (const c of await mem.listConversations())
    out[c.title] = (await mem.getMessages(c.id!)).map((m) => m.text);
  return out;
}
