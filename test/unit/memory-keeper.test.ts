// The memory keeper in the app (src/app/memory-keeper.ts) on fake timers: it runs once the chat is
// idle after an exchange in which the model saved nothing, never while a turn runs or words wait
// in the composer; a new turn or another chat aborts it at once without the turn waiting; its
// exchanges then wait for the next run; a kept run stores its card under the reply, a refused
// one leaves one status line; off, nothing runs.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  KEEPER_IDLE_MS,
  KEEPER_QUIET_MS,
  type KeeperOutcome,
  type KeeperRequest,
} from '../../src/chat/keeper';
import { readKeeperCard } from '../../src/chat/keeper-card';
import type { ChatSession, TurnResult } from '../../src/chat/types';
import { MemoryKeeper, type KeeperHandover } from '../../src/app/memory-keeper';
import { decodeHandover, encodeHandover, NEW_LEDGER } from '../../src/app/keeper-schedule';
import type { ServerInfo } from '../../src/llm/types';
import type { Message } from '../../src/memory/types';

const SERVER: ServerInfo = {
  kind: 'koboldcpp',
  baseUrl: 'http://localhost:5001',
  model: 'koboldcpp/tiny',
  contextSize: 8192,
  tokenizer: true,
};

const KEPT: KeeperOutcome = {
  status: 'kept',
  mode: 'constrained',
  ops: [{ op: 'add', path: 'Family/Ana', content: 'Ana is moving to Lisbon in May.', version: 1 }],
};

/** A run the test settles; each remembers its request. */
interface PendingRun {
  request: KeeperRequest;
  settle(outcome: KeeperOutcome): void;
}

function setup(
  options: {
    enabled?: boolean;
    open?: number;
    writing?: boolean;
    handover?: KeeperHandover;
    /** The stored messages (another page's, to share). */
    messages?: Message[];
  } = {},
) {
  const messages: Message[] = options.messages ?? [];
  let nextId = messages.length + 1;
  let enabled = options.enabled ?? true;
  const runs: PendingRun[] = [];
  const running: (number | undefined)[] = [];
  const lines: string[] = [];
  const memory = {
    getMessages: async (conversationId: number) =>
      messages.filter((m) => m.conversationId === conversationId),
    addMessage: async (m: Omit<Message, 'id' | 'time'>) => {
      const id = nextId++;
      messages.push({ ...m, id, time: new Date() });
      return { status: 'SUCCESS' as const, id };
    },
  };
  const keeper = new MemoryKeeper({
    memory: memory as unknown as ConstructorParameters<typeof MemoryKeeper>[0]['memory'],
    target: () => ({
      connector: { structured: () => Promise.reject(new Error('not here')) },
      server: async () => SERVER,
      contextTokens: 300,
    }),
    enabled: () => enabled,
    openConversation: () => options.open ?? 1,
    schemaModes: { get: () => undefined, set: () => undefined },
    onRunning: (id) => running.push(id),
    onStatusLine: (line) => lines.push(line),
    ...(options.handover ? { handover: options.handover } : {}),
    run: (request) =>
      new Promise<KeeperOutcome>((resolve) => {
        const run = { request, settle: resolve };
        runs.push(run);
        // As runKeeper does: an abort ends the wait at once, unless it is writing already.
        if (!options.writing)
          request.signal?.addEventListener('abort', () =>
            resolve({ status: 'aborted', mode: 'constrained', ops: [] }),
          );
      }),
  });

  /** One exchange stored in conversation `c`, as a turn would leave it, and its result. */
  function exchange(c: number, user: string, reply: string, wrote = false): TurnResult {
    const userId = nextId++;
    messages.push({ id: userId, conversationId: c, role: 'user', text: user, time: new Date() });
    const replyId = nextId++;
    messages.push({
      id: replyId,
      conversationId: c,
      role: 'assistant',
      text: reply,
      time: new Date(),
    });
    return { status: 'answered', text: reply, rounds: 0, userId, replyId, wrote };
  }

  /** A session whose turns store one exchange each, and end when the test says. */
  const ends: ((r: TurnResult) => void)[] = [];
  const session: ChatSession = {
    server: async () => SERVER,
    toolMode: async () => 'native',
    send: (c, text) =>
      new Promise<TurnResult>((resolve) => ends.push(() => resolve(exchange(c, text, 'OK.')))),
    regenerate: () => Promise.reject(new Error('not here')),
    resend: () => Promise.reject(new Error('not here')),
    continueReply: () => Promise.reject(new Error('not here')),
  };
  const wrapped = keeper.wrap(session);
  /** Sends, and ends the turn at once; resolves when the app has heard its end. */
  async function say(c: number, text: string): Promise<TurnResult> {
    const turn = wrapped.send(c, text);
    ends.shift()!({} as TurnResult);
    const result = await turn;
    await Promise.resolve();
    return result;
  }
  return {
    keeper,
    wrapped,
    messages,
    runs,
    running,
    lines,
    exchange,
    say,
    ends,
    setEnabled: (on: boolean) => (enabled = on),
  };
}

/** Lets the keeper's awaits (server, messages, the run) go through. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('MemoryKeeper', () => {
  it(`runs ${KEEPER_IDLE_MS / 1000} s after an exchange in which nothing was saved, and stores its card under the reply`, async () => {
    const t = setup();
    const result = await t.say(1, 'My sister Ana is moving to Lisbon in May.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS - 1);
    expect(t.runs).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    await flush();
    expect(t.runs).toHaveLength(1);
    expect(t.running).toEqual([1]);
    const { request } = t.runs[0];
    expect(request).toMatchObject({
      conversationId: 1,
      server: SERVER,
      contextTokens: 300,
      exchanges: [{ user: 'My sister Ana is moving to Lisbon in May.', assistant: 'OK.' }],
    });
    t.runs[0].settle(KEPT);
    await flush();
    expect(t.running).toEqual([1, undefined]);
    const card = t.messages.at(-1)!;
    expect(card).toMatchObject({ conversationId: 1, role: 'assistant', text: '' });
    expect(readKeeperCard(card)).toEqual({ ops: KEPT.ops, replyId: result.replyId });
    expect(t.lines).toEqual([]);
    // Looked at: not asked again.
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS * 2);
    expect(t.runs).toHaveLength(1);
  });

  it('an exchange in which the model saved is not kept again', async () => {
    const t = setup();
    const r = t.exchange(1, 'Remember: I like tea.', 'Saved.', true);
    t.keeper.turnStarted();
    t.keeper.turnEnded(1, r);
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS * 2);
    expect(t.runs).toHaveLength(0);
  });

  it('off: nothing is noted or run; turned off mid-run, the run stops and nothing noted stays', async () => {
    const off = setup({ enabled: false });
    await off.say(1, 'My sister Ana is moving to Lisbon in May.');
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS * 2);
    expect(off.runs).toHaveLength(0);

    const t = setup();
    await t.say(1, 'My sister Ana is moving to Lisbon in May.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS);
    await flush();
    const signal = t.runs[0].request.signal!;
    t.setEnabled(false);
    t.keeper.settingsChanged();
    expect(signal.aborted).toBe(true);
    t.setEnabled(true);
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS * 2);
    expect(t.runs).toHaveLength(1);
  });

  it('a new turn aborts a run at once, without waiting for it; its exchange is kept with the next', async () => {
    const t = setup();
    await t.say(1, 'My sister Ana is moving to Lisbon in May.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS);
    await flush();
    const first = t.runs[0].request.signal!;
    // The turn starts: the abort is synchronous, and the session's send was called already.
    const turn = t.wrapped.send(1, 'She starts a new job there.');
    expect(first.aborted).toBe(true);
    expect(t.ends).toHaveLength(1);
    // Nothing runs while the turn does, however long it takes.
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS * 2);
    expect(t.runs).toHaveLength(1);
    t.ends.shift()!({} as TurnResult);
    await turn;
    await flush();
    expect(t.running).toEqual([1, undefined]);
    // A stopped run counts as a run for when the next is due: not after every exchange.
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS);
    await flush();
    expect(t.runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS - KEEPER_IDLE_MS);
    await flush();
    expect(t.runs).toHaveLength(2);
    expect(t.runs[1].request.exchanges.map((x) => x.user)).toEqual([
      'My sister Ana is moving to Lisbon in May.',
      'She starts a new job there.',
    ]);
  });

  it('a run stopped while it writes counts as done: its exchanges are not asked again', async () => {
    const t = setup({ writing: true });
    await t.say(1, 'My sister Ana is moving to Lisbon in May.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS);
    await flush();
    const turn = t.wrapped.send(1, 'She starts a new job there.');
    expect(t.runs[0].request.signal!.aborted).toBe(true);
    // It was saving: it finishes and stores its card.
    t.runs[0].settle(KEPT);
    await flush();
    expect(t.messages.filter((m) => readKeeperCard(m))).toHaveLength(1);
    t.ends.shift()!({} as TurnResult);
    await turn;
    await flush();
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS);
    await flush();
    // The next run has the new exchange alone.
    expect(t.runs).toHaveLength(2);
    expect(t.runs[1].request.exchanges.map((x) => x.user)).toEqual(['She starts a new job there.']);
  });

  it('a server busy or down keeps the exchanges for a later run; another failure does not', async () => {
    const t = setup();
    await t.say(1, 'My sister Ana is moving to Lisbon in May.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS);
    await flush();
    t.runs[0].settle({ status: 'error', mode: 'constrained', ops: [], retry: true });
    await flush();
    expect(t.lines.at(-1)).toMatch(/will try again later/);
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS);
    await flush();
    expect(t.runs).toHaveLength(2);
    expect(t.runs[1].request.exchanges.map((x) => x.user)).toEqual([
      'My sister Ana is moving to Lisbon in May.',
    ]);
    // A failure that would fail the same way again: looked at, not asked again.
    t.runs[1].settle({ status: 'error', mode: 'constrained', ops: [], message: 'Bad request.' });
    await flush();
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS * 2);
    await flush();
    expect(t.runs).toHaveLength(2);
  });

  it('words in the composer hold it back; typing restarts the idle clock', async () => {
    const t = setup();
    await t.say(1, 'My sister Ana is moving to Lisbon in May.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS - 1000);
    t.keeper.typing(true);
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS * 2);
    expect(t.runs).toHaveLength(0);
    // Words cleared: idle again from now.
    t.keeper.typing(false);
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS - 1);
    expect(t.runs).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    await flush();
    expect(t.runs).toHaveLength(1);
  });

  it('opening another chat aborts a run; the exchange waits for the next one', async () => {
    const t = setup();
    await t.say(1, 'My sister Ana is moving to Lisbon in May.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS);
    await flush();
    t.keeper.conversationOpened();
    expect(t.runs[0].request.signal!.aborted).toBe(true);
    await flush();
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS);
    await flush();
    expect(t.runs).toHaveLength(2);
    expect(t.runs[1].request.exchanges).toHaveLength(1);
  });

  it('after a run, the next waits for three exchanges or a minute of quiet', async () => {
    const t = setup();
    await t.say(1, 'My sister Ana is moving to Lisbon in May.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS);
    await flush();
    t.runs[0].settle({ status: 'nothing', mode: 'constrained', ops: [] });
    await flush();
    await t.say(1, 'She starts in June.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS);
    await flush();
    expect(t.runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS - KEEPER_IDLE_MS);
    await flush();
    expect(t.runs).toHaveLength(2);
    t.runs[1].settle({ status: 'nothing', mode: 'constrained', ops: [] });
    await flush();
    for (const text of ['One.', 'Two.', 'Three.']) await t.say(1, text);
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS);
    await flush();
    expect(t.runs).toHaveLength(3);
    expect(t.runs[2].request.exchanges.map((x) => x.user)).toEqual(['One.', 'Two.', 'Three.']);
  });

  it('a refused answer writes no card and leaves one line in the status; it is not asked again', async () => {
    const t = setup();
    await t.say(1, 'My sister Ana is moving to Lisbon in May.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS);
    await flush();
    const before = t.messages.length;
    t.runs[0].settle({
      status: 'refused',
      mode: 'constrained',
      ops: [],
      message:
        'The memory keeper asked to update Family/Bob, which is not one of the entries it was shown, so nothing was saved.',
    });
    await flush();
    expect(t.messages).toHaveLength(before);
    expect(t.lines).toEqual([
      'The memory keeper asked to update Family/Bob, which is not one of the entries it was shown, so nothing was saved.',
    ]);
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS * 2);
    expect(t.runs).toHaveLength(1);
  });

  it('keeps the open chat first, then the others', async () => {
    const t = setup({ open: 2 });
    await t.say(1, 'In chat one.');
    await t.say(2, 'In chat two.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS);
    await flush();
    expect(t.runs.map((r) => r.request.conversationId)).toEqual([2]);
    t.runs[0].settle({ status: 'nothing', mode: 'constrained', ops: [] });
    await flush();
    await vi.advanceTimersByTimeAsync(0);
    await flush();
    expect(t.runs.map((r) => r.request.conversationId)).toEqual([2, 1]);
  });
});

/** A handover kept in a variable, as localStorage would keep it. */
function handoverStore(): KeeperHandover & { text: string | null } {
  const store = {
    text: null as string | null,
    peek: () => store.text,
    leave: (text: string) => void (store.text = text),
    take: async () => {
      const text = store.text;
      store.text = null;
      return text;
    },
  };
  return store;
}

describe('MemoryKeeper: a page that goes before the keeper ran', () => {
  it('leaves its unkept exchanges; the next page takes them over and keeps them', async () => {
    const store = handoverStore();
    const first = setup({ handover: store });
    await first.say(1, 'My sister Ana is moving to Lisbon in May.');
    // Closed before the keeper ran (it waits for the person to be idle).
    vi.advanceTimersByTime(KEEPER_IDLE_MS / 2);
    await flush();
    expect(first.runs).toHaveLength(0);
    first.keeper.handOver();
    first.keeper.dispose();
    expect(store.text).not.toBeNull();

    const next = setup({ handover: store, messages: first.messages });
    await next.keeper.claim();
    expect(store.text).toBeNull(); // taken: no third page takes it too
    vi.advanceTimersByTime(KEEPER_IDLE_MS - 1);
    await flush();
    expect(next.runs).toHaveLength(0); // once the person is idle here
    vi.advanceTimersByTime(1);
    await flush();
    expect(next.runs).toHaveLength(1);
    expect(next.runs[0].request.exchanges).toMatchObject([
      { user: 'My sister Ana is moving to Lisbon in May.', assistant: 'OK.' },
    ]);
  });

  it('back from the back/forward cache after another page took its exchanges: runs nothing', async () => {
    const store = handoverStore();
    const first = setup({ handover: store });
    await first.say(1, 'My sister Ana is moving to Lisbon in May.');
    first.keeper.handOver(); // pagehide: into the back/forward cache, not gone
    const other = setup({ handover: store, messages: first.messages });
    await other.keeper.claim();
    await first.keeper.claim(); // pageshow, persisted: nothing left to take back
    vi.advanceTimersByTime(KEEPER_QUIET_MS);
    await flush();
    expect(other.runs).toHaveLength(1);
    expect(first.runs).toHaveLength(0);
  });

  it('back from the back/forward cache with nothing taken: takes its own back and keeps them once', async () => {
    const store = handoverStore();
    const first = setup({ handover: store });
    await first.say(1, 'My sister Ana is moving to Lisbon in May.');
    first.keeper.handOver();
    await first.keeper.claim();
    vi.advanceTimersByTime(KEEPER_QUIET_MS);
    await flush();
    expect(first.runs).toHaveLength(1);
  });

  it('does not hand over the exchanges of a run that has started writing', async () => {
    const store = handoverStore();
    const first = setup({ handover: store, writing: true });
    await first.say(1, 'My sister Ana is moving to Lisbon in May.');
    vi.advanceTimersByTime(KEEPER_QUIET_MS);
    await flush();
    expect(first.runs).toHaveLength(1);
    first.runs[0].request.onWriting?.();
    first.keeper.handOver(); // the page goes while the keeper writes
    expect(store.text).toBeNull();
  });

  it('leaves nothing when it kept everything, or with the setting off', async () => {
    const store = handoverStore();
    const kept = setup({ handover: store });
    await kept.say(1, 'My sister Ana is moving to Lisbon in May.');
    vi.advanceTimersByTime(KEEPER_QUIET_MS);
    await flush();
    kept.runs[0].settle(KEPT);
    await flush();
    kept.keeper.handOver();
    expect(store.text).toBeNull();

    const off = setup({ handover: store });
    await off.say(1, 'Bob is back from Oslo.');
    off.setEnabled(false);
    off.keeper.handOver();
    expect(store.text).toBeNull();
  });

  it('merges what several pages left, each user message once, and reads bad text as nothing', () => {
    const a = new Map([[1, { unkept: [{ userId: 2, replyId: 3 }], sinceRun: 1 }]]);
    const b = new Map([
      [
        1,
        {
          unkept: [
            { userId: 2, replyId: 5 },
            { userId: 6, replyId: 7 },
          ],
          sinceRun: 2,
        },
      ],
      [4, NEW_LEDGER],
    ]);
    const both = decodeHandover(encodeHandover(b, encodeHandover(a, null) ?? null) ?? null);
    expect([...both.keys()]).toEqual([1]);
    expect(both.get(1)!.unkept).toEqual([
      { userId: 2, replyId: 5 },
      { userId: 6, replyId: 7 },
    ]);
    for (const bad of ['', 'not json', '[1,2]', '{"x":[[1,2]]}', '{"3":[[1,"2"],[0,4]]}', 'null'])
      expect(decodeHandover(bad).size).toBe(0);
  });
});
