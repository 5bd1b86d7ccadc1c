// The memory keeper's decisions in the app, pure (src/app/keeper-schedule.ts): what a turn and a
// run change in a conversation's ledger, when it is due (in step with the core's `keeperDue`),
// which conversation runs, the exchanges read from the stored messages, the status line; and
// its card, which the model never reads (src/chat/keeper-card.ts, `isAside` in history.ts,
// `replyGroups` in replies.ts).
import { describe, expect, it } from 'vitest';
import {
  KEEPER_EVERY,
  KEEPER_IDLE_MS,
  KEEPER_MAX_EXCHANGES,
  KEEPER_QUIET_MS,
  keeperDue,
} from '../../src/chat/keeper';
import { keeperCardMessage, readKeeperCard } from '../../src/chat/keeper-card';
import { historyIds, isAside, toChatMessages } from '../../src/chat/history';
import {
  NEW_LEDGER,
  afterRun,
  afterTurn,
  batchExchanges,
  dueAt,
  dueConversation,
  keeperStatusLine,
  nextDue,
  runBatch,
  type KeeperLedger,
} from '../../src/app/keeper-schedule';
import { isKeeperCard, replyGroups, visibleMessages } from '../../src/memory/replies';
import type { Message, Role } from '../../src/memory/types';

const answered = (userId: number, replyId: number, wrote = false) =>
  ({ status: 'answered', wrote, userId, replyId }) as const;

let next = 1;
const msg = (role: Role, text: string, meta?: Record<string, unknown>): Message => ({
  id: next++,
  conversationId: 1,
  role,
  text,
  time: new Date(0),
  ...(meta ? { meta } : {}),
});
const card = (replyId: number): Message => ({
  ...keeperCardMessage(
    1,
    [{ op: 'add', path: 'Family/Ana', content: 'Ana moves.', version: 1 }],
    replyId,
  ),
  id: next++,
  time: new Date(0),
});

describe('the ledger after a turn', () => {
  it('an answer in which no memory tool wrote is unkept; one that wrote is not; both count', () => {
    let l: KeeperLedger = afterTurn(NEW_LEDGER, answered(1, 2));
    expect(l.unkept).toEqual([{ userId: 1, replyId: 2 }]);
    l = afterTurn({ ...l, sinceRun: 0 }, answered(3, 4, true));
    expect(l).toEqual({ unkept: [{ userId: 1, replyId: 2 }], sinceRun: 1 });
  });

  it('answering the same message again (regenerate, edit and resend) replaces it', () => {
    let l = afterTurn(NEW_LEDGER, answered(1, 2));
    l = afterTurn(l, answered(1, 5));
    expect(l.unkept).toEqual([{ userId: 1, replyId: 5 }]);
    // An answer that saved takes it off: the model kept it itself.
    expect(afterTurn(l, answered(1, 6, true)).unkept).toEqual([]);
  });

  it('a stop, a failure, a continue (no user message) or no result is no exchange', () => {
    const l = afterTurn(NEW_LEDGER, answered(1, 2));
    expect(afterTurn(l, { status: 'aborted', userId: 3, replyId: 4, wrote: false })).toBe(l);
    expect(afterTurn(l, { status: 'error', userId: 3 })).toBe(l);
    expect(afterTurn(l, { status: 'answered', replyId: 2, wrote: false })).toBe(l);
    expect(afterTurn(l, undefined)).toBe(l);
  });
});

describe('a run', () => {
  const six: KeeperLedger = {
    unkept: [1, 2, 3, 4, 5, 6].map((i) => ({ userId: i * 10, replyId: i * 10 + 1 })),
    sinceRun: 6,
  };

  it(`takes the oldest ${KEEPER_MAX_EXCHANGES} exchanges; the rest wait`, () => {
    expect(runBatch(six).map((x) => x.userId)).toEqual([10, 20, 30, 40]);
  });

  it('once done (kept, nothing, refused, error) they are off the list; stopped, they stay', () => {
    const batch = runBatch(six);
    for (const status of ['kept', 'nothing', 'refused', 'error'] as const) {
      expect(afterRun(six, batch, status)).toEqual({ unkept: six.unkept.slice(4), sinceRun: 0 });
    }
    // Stopped: they stay, and the next run waits as after any run.
    expect(afterRun(six, batch, 'aborted')).toEqual({ unkept: six.unkept, sinceRun: 0 });
  });
});

describe('when it is due', () => {
  const one = (sinceRun: number): KeeperLedger => ({
    unkept: [{ userId: 1, replyId: 2 }],
    sinceRun,
  });

  it(`${KEEPER_IDLE_MS / 1000} s after the last activity once ${KEEPER_EVERY} exchanges passed (or never ran), else after ${KEEPER_QUIET_MS / 1000} s of quiet`, () => {
    expect(dueAt(one(Infinity), 1000)).toBe(1000 + KEEPER_IDLE_MS);
    expect(dueAt(one(KEEPER_EVERY), 1000)).toBe(1000 + KEEPER_IDLE_MS);
    expect(dueAt(one(1), 1000)).toBe(1000 + KEEPER_QUIET_MS);
    expect(dueAt({ unkept: [], sinceRun: Infinity }, 1000)).toBeUndefined();
  });

  it('agrees with keeperDue at every moment', () => {
    for (const sinceRun of [0, 1, KEEPER_EVERY - 1, KEEPER_EVERY, Infinity]) {
      const ledger = one(sinceRun);
      const at = dueAt(ledger, 0)!;
      for (const idleMs of [
        0,
        KEEPER_IDLE_MS - 1,
        KEEPER_IDLE_MS,
        KEEPER_QUIET_MS - 1,
        KEEPER_QUIET_MS,
      ]) {
        const due = keeperDue({ unkeptExchanges: 1, exchangesSinceRun: sinceRun, idleMs });
        expect(idleMs >= at, `sinceRun ${sinceRun}, idle ${idleMs}`).toBe(due);
      }
    }
  });

  it('the open conversation first, else the one that waited longest; the earliest time of all', () => {
    const ledgers = new Map<number, KeeperLedger>([
      [7, { unkept: [{ userId: 50, replyId: 51 }], sinceRun: Infinity }],
      [8, { unkept: [{ userId: 20, replyId: 21 }], sinceRun: Infinity }],
      [9, { unkept: [{ userId: 90, replyId: 91 }], sinceRun: 1 }],
    ]);
    expect(dueConversation(ledgers, 7, KEEPER_IDLE_MS)).toBe(7);
    expect(dueConversation(ledgers, 9, KEEPER_IDLE_MS)).toBe(8);
    expect(dueConversation(ledgers, 9, KEEPER_QUIET_MS)).toBe(9);
    expect(dueConversation(ledgers, 7, KEEPER_IDLE_MS - 1)).toBeUndefined();
    expect(nextDue(ledgers, 100)).toBe(100 + KEEPER_IDLE_MS);
    expect(nextDue(new Map(), 100)).toBeUndefined();
  });
});

describe('the exchanges a run reads', () => {
  it('the stored texts as they are now; the card goes under the newest found; gone ones are left out', () => {
    const u1 = msg('user', 'My sister Ana is moving to Lisbon in May.');
    const r1 = msg('assistant', 'How exciting!');
    const u2 = msg('user', 'Deleted since');
    const u3 = msg('user', 'And the cat?');
    const r3 = msg('assistant', '   ');
    const found = batchExchanges(
      [u1, r1, u2, u3, r3],
      [
        { userId: u1.id!, replyId: r1.id! },
        { userId: u2.id!, replyId: 999 },
        { userId: u3.id!, replyId: r3.id! },
      ],
    );
    expect(found).toEqual({
      exchanges: [{ user: u1.text, assistant: r1.text, replyId: r1.id }],
      replyId: r1.id,
    });
    expect(batchExchanges([], [{ userId: 1, replyId: 2 }])).toEqual({
      exchanges: [],
      replyId: undefined,
    });
  });
});

describe("a reasoning model's reply", () => {
  it('is read by the keeper without its thinking: the answer is what was said', () => {
    const u = msg('user', 'My sister Ana moved to Porto.');
    const r = msg(
      'assistant',
      '<think>\nMaybe Ana lives in Lisbon too? I should not assume.\n</think>\n\nLovely news about Ana!',
    );
    expect(batchExchanges([u, r], [{ userId: u.id!, replyId: r.id! }]).exchanges).toEqual([
      { user: u.text, assistant: 'Lovely news about Ana!', replyId: r.id },
    ]);
  });
});

describe('the status line', () => {
  it('a refused answer says so in its own sentence; a failure says the keeper could not run; the rest say nothing', () => {
    const refused =
      'The memory keeper asked to update Family/Bob, which is not saved, so nothing was saved.';
    expect(keeperStatusLine({ status: 'refused', message: refused })).toBe(refused);
    expect(
      keeperStatusLine({ status: 'error', message: 'KoboldCPP is busy. Try again in a moment.' }),
    ).toBe('The memory keeper could not run: KoboldCPP is busy. Try again in a moment.');
    expect(keeperStatusLine({ status: 'refused' })).toMatch(/not used, so nothing was saved/);
    // A failure that passes: the person is told it will be tried again, not to try it.
    expect(
      keeperStatusLine({
        status: 'error',
        message: 'KoboldCPP is busy: wait a moment, then try again.',
        retry: true,
      }),
    ).toBe(
      'The memory keeper could not reach the server (busy, not running, or the connection dropped); it will try again later.',
    );
    for (const status of ['kept', 'nothing', 'aborted'] as const) {
      expect(keeperStatusLine({ status, message: 'anything' })).toBeUndefined();
    }
  });
});

describe('the card: stored with the chat, never read by the model', () => {
  it('reads back what it kept and where it shows; anything else is not a card', () => {
    const c = card(4);
    expect(c).toMatchObject({ role: 'assistant', text: '' });
    expect(readKeeperCard(c)).toEqual({
      ops: [{ op: 'add', path: 'Family/Ana', content: 'Ana moves.', version: 1 }],
      replyId: 4,
    });
    const undone = {
      ...c,
      meta: {
        keeper: { ...(c.meta!.keeper as object), undone: { status: 'partial', message: 'left' } },
      },
    };
    expect(readKeeperCard(undone)?.undone).toEqual({ status: 'partial', message: 'left' });
    expect(readKeeperCard(msg('assistant', 'hi'))).toBeUndefined();
    expect(
      readKeeperCard(msg('assistant', '', { keeper: { ops: 'x', replyId: 1 } })),
    ).toBeUndefined();
    expect(
      readKeeperCard(msg('assistant', '', { keeper: { ops: [{ op: 'drop' }], replyId: 1 } })),
    ).toBeUndefined();
    expect(isKeeperCard(msg('assistant', '', { keeper: [] }))).toBe(false);
  });

  it('notices and cards are asides: toChatMessages and historyIds leave out the same ones', () => {
    const u = msg('user', 'My sister Ana is moving to Lisbon in May.');
    const r = msg('assistant', 'How exciting!');
    const n = msg('assistant', '', { notice: 'round-limit' });
    const c = card(r.id!);
    const u2 = msg('user', 'Thanks');
    const all = [u, r, c, n, u2];
    expect(all.map(isAside)).toEqual([false, false, true, true, false]);
    expect(toChatMessages(all).map((m) => m.content)).toEqual([u.text, r.text, u2.text]);
    expect(historyIds(all)).toEqual([u.id, r.id, u2.id]);
  });

  it('a card is no reply: not an alternative, not shown as a message, and the reply before it stays the last (continue)', () => {
    const u = msg('user', 'Q', { alt: 1 });
    const r0 = msg('assistant', 'A0');
    const r1 = msg('assistant', 'A1', { alt: 1 });
    const c = card(r1.id!);
    const groups = replyGroups([u, r0, r1, c]);
    expect(groups).toHaveLength(1);
    expect(groups[0].alternatives).toEqual([0, 1]);
    expect(groups[0].members.map((m) => m.id)).toEqual([r0.id, r1.id]);
    expect(visibleMessages([u, r0, r1, c]).at(-1)?.id).toBe(r1.id);
    // A card alone after a user message makes no reply of it (regenerate, Continue).
    const lone = replyGroups([msg('user', 'Q2'), card(1)]);
    expect(lone[0].alternatives).toEqual([]);
  });
});
