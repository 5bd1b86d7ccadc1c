// Where the memory keeper's unkept exchanges wait when a page goes (docs/chat.md, "Memory
// keeper"): this browser profile's localStorage, taken under a Web Lock so that of two open pages
// only one takes them. Per device, never synced.
import type { KeeperHandover } from './memory-keeper';

export const KEEPER_HANDOVER_KEY = 'sm-keeper-handover';

/** The handover in `storage` (none where the page has no storage, or it is refused). */
export function localHandover(
  storage: Storage | undefined = globalThis.localStorage,
  locks: Pick<LockManager, 'request'> | undefined = globalThis.navigator?.locks,
): KeeperHandover | undefined {
  if (!storage) return undefined;
  const read = () => {
    try {
      return storage.getItem(KEEPER_HANDOVER_KEY);
    } catch {
      return null;
    }
  };
  const takeNow = () => {
    const text = read();
    try {
      if (text !== null) storage.removeItem(KEEPER_HANDOVER_KEY);
    } catch {
      return null; // not removed: left for a page that can
    }
    return text;
  };
  return {
    peek: read,
    leave(text) {
      try {
        storage.setItem(KEEPER_HANDOVER_KEY, text);
      } catch {
        // Storage full or refused: the exchanges go with the page, as without a handover.
      }
    },
    async take() {
      if (!locks) return takeNow();
      try {
        return await locks.request(KEEPER_HANDOVER_KEY, takeNow);
      } catch {
        return null;
      }
    },
  };
}
