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
import { nodePouchFactory } from '../sync-server';
import { Clock, openTestMemory } from './helpers';

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
