// One turn at a time in a chat across a browser's tabs (a Web Lock per chat, src/chat/turn.ts),
// with a stand-in for `navigator.locks` (Node has none): another tab's turn refuses, this page's
// own turn still winding up is waited for.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ANSWERING_ELSEWHERE, CHAT_LOCK, begin } from '../../src/chat/turn';
import type { SessionContext } from '../../src/chat/turn';
import type { TurnResult } from '../../src/chat/types';

/** Exclusive locks by name, granted in order; `ifAvailable` gets null when one is held. */
function fakeLocks() {
  const queues = new Map<string, (() => void)[]>();
  const held = new Set<string>();
  const release = (name: string) => {
    const next = queues.get(name)?.shift();
    if (next) next();
    else held.delete(name);
  };
  return {
    held,
    async request<T>(
      name: string,
      a: { ifAvailable?: boolean } | ((lock: object | null) => Promise<T>),
      b?: (lock: object | null) => Promise<T>,
    ): Promise<T> {
      const cb = (typeof a === 'function' ? a : b)!;
      const options = typeof a === 'function' ? {} : a;
      if (held.has(name)) {
        if (options.ifAvailable) return cb(null);
        await new Promise<void>((r) =>
          (queues.get(name) ?? queues.set(name, []).get(name)!).push(r),
        );
      }
      held.add(name);
      try {
        return await cb({ name });
      } finally {
        release(name);
      }
    },
  };
}

const ctx = { emit: () => undefined } as unknown as SessionContext;
const answered = (text: string): TurnResult => ({ status: 'answered', text, rounds: 1 });
let locks: ReturnType<typeof fakeLocks>;
const had = Object.getOwnPropertyDescriptor(globalThis, 'navigator');

beforeEach(() => {
  locks = fakeLocks();
  Object.defineProperty(globalThis, 'navigator', { value: { locks }, configurable: true });
});
afterEach(() => {
  if (had) Object.defineProperty(globalThis, 'navigator', had);
  else delete (globalThis as { navigator?: unknown }).navigator;
});

describe('one turn at a time in a chat', () => {
  it('a turn while another tab answers in the chat is refused with a sentence, before anything runs', async () => {
    let ran = false;
    let release!: () => void;
    // Another tab's turn: it holds the chat's lock until released.
    const other = locks.request(`${CHAT_LOCK}7`, () => new Promise<void>((r) => (release = r)));
    const events: unknown[] = [];
    const r = await begin(
      ctx,
      7,
      undefined,
      (e) => events.push(e),
      async () => {
        ran = true;
        return answered('no');
      },
    );
    expect(ran).toBe(false);
    expect(r.status).toBe('error');
    expect(events).toEqual([{ type: 'notice', message: ANSWERING_ELSEWHERE }]);
    // Another chat is free meanwhile.
    expect((await begin(ctx, 8, undefined, undefined, async () => answered('yes'))).text).toBe(
      'yes',
    );
    release();
    await other;
  });

  it("this page's turn still winding up (stopped, storing) is waited for, not taken for another tab's", async () => {
    let finish!: () => void;
    const order: string[] = [];
    const first = begin(ctx, 7, undefined, undefined, async () => {
      await new Promise<void>((r) => (finish = r));
      order.push('first stored');
      return answered('first');
    });
    await Promise.resolve();
    const second = begin(ctx, 7, undefined, undefined, async () => {
      order.push('second ran');
      return answered('second');
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual([]);
    finish();
    expect((await second).text).toBe('second');
    expect((await first).text).toBe('first');
    expect(order).toEqual(['first stored', 'second ran']);
    expect(locks.held.size).toBe(0);
  });
});
