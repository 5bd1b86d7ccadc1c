// Reliability: the storage quota runs out at each write step (node, fake-indexeddb). Every write
// operation of the engine, and a whole chat turn with memory tool calls, runs with a
// QuotaExceededError at its Nth IndexedDB write (from then on, or only there), reported the
// three ways a browser reports it. A single operation must leave the store exactly as before
// (and say STORAGE_FULL) or exactly as a run without the fault leaves it; a chat turn must end
// in time, every tool result must match the store, and the tables must agree.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatSession, type SessionEvent } from '../../src/chat/chat-session';
import { createConnector } from '../../src/llm/connector';
import type { MemoryApi } from '../../src/memory/types';
import { startFakeServer, type FakeReply, type FakeServer } from '../fixtures/fake-llm';
import { Clock, ok, openTestMemory, sharedEmbedder, type Snapshot } from '../integration/helpers';
import { MARKUP } from './arbitraries';
import { Tally, check, runCount, testTimeout, uncaughtDuring, within } from './config';
import { QUOTA_MODES, countWrites, withQuotaFault, type QuotaFault } from './quota-fault';
import {
  dispose,
  chatProblems,
  entriesByPath,
  expectNoPollution,
  expectSound,
  safeJson,
  snapshotDb,
  text,
} from './store';

/** The store every case starts from (same clock, so same dates and ids every time). */
async function seeded(): Promise<{ mem: MemoryApi; name: string }> {
  const { mem, name } = openTestMemory({ clock: new Clock() });
  ok(
    await mem.recordTurn({
      conversationId: 1,
      role: 'user',
      text: 'We ship phase one in March. The second phase adds sharing. Keep it simple.',
    }),
  );
  ok(await mem.saveMemory('Seed/One', JSON.parse('{"goal":"ship","__proto__":{"x":1}}')));
  ok(await mem.saveMemory('Seed/Two/Deep', 'a deep seed'));
  ok(await mem.saveMemory('A/B', { x: 1 }));
  ok(await mem.saveMemory('A/B', { x: 2, note: MARKUP[0] }));
  ok(await mem.saveMemory('A/B/C', [1, 2, 3]));
  return { mem, name };
}

interface Op {
  name: string;
  run(mem: MemoryApi): Promise<unknown>;
  /** Resolves to nothing and may reject (settings), instead of returning a result. */
  plain?: boolean;
}

let backup = '';
let markdown = '';

const OPS: readonly Op[] = [
  {
    name: 'saveMemory of a new entry',
    run: (m) => m.saveMemory('Quota/New', { big: 'x'.repeat(5_000) }),
  },
  { name: 'saveMemory over an entry', run: (m) => m.saveMemory('Seed/One', 'replaced') },
  {
    name: 'updateMemory',
    run: (m) => m.updateMemory('A/B', JSON.parse('{"x":3,"__proto__":{"y":1}}')),
  },
  { name: 'deleteMemory of a subtree', run: (m) => m.deleteMemory('A', true) },
  { name: 'moveMemory of a subtree', run: (m) => m.moveMemory('Seed', 'Moved/Seed') },
  {
    name: 'restoreMemory',
    run: async (m) => m.restoreMemory(ok(await m.getHistory('A/B')).versions[0].id),
  },
  { name: 'queryMemory (notes the read)', run: (m) => m.queryMemory('Seed/Two/Deep') },
  {
    name: 'recordTurn',
    run: (m) =>
      m.recordTurn({ conversationId: 1, role: 'assistant', text: 'One. Two sentences. Three!' }),
  },
  {
    name: 'addMessage with tool calls',
    run: (m) =>
      m.addMessage({
        conversationId: 1,
        role: 'assistant',
        text: 'Saved.',
        toolCalls: [{ id: 'c1', name: 'saveMemory', arguments: { path: 'A' }, result: {} }],
      }),
  },
  { name: 'createConversation', run: (m) => m.createConversation('Another') },
  { name: 'deleteConversation', run: (m) => m.deleteConversation(1) },
  { name: 'importJson (merge)', run: (m) => m.importJson(backup, 'merge') },
  { name: 'importJson (replace)', run: (m) => m.importJson(backup, 'replace') },
  { name: 'importMarkdown', run: (m) => m.importMarkdown(markdown) },
  { name: 'setSetting', run: (m) => m.setSetting('reliability', { a: [1, 2] }), plain: true },
];

/** Each operation without a fault: how many writes it makes and the store it leaves. */
const clean = new Map<string, { writes: number; after: Snapshot }>();

beforeAll(async () => {
  await sharedEmbedder().ready();
  const { mem, name } = openTestMemory({ clock: new Clock() });
  ok(
    await mem.recordTurn({ conversationId: 7, role: 'user', text: 'From the backup. Two turns.' }),
  );
  ok(await mem.saveMemory('Seed/One', { from: 'backup' }));
  ok(await mem.saveMemory('Backup/Only', [MARKUP[1]]));
  backup = (await mem.exportJson()) as string;
  markdown = (await mem.exportMarkdown()) as string;
  await dispose(mem, name);
  for (const op of OPS) {
    const { mem: m, name } = await seeded();
    const [result, writes] = await countWrites(() => op.run(m));
    if (!op.plain) ok(result as { status: string });
    clean.set(op.name, { writes, after: await snapshotDb(name) });
    await dispose(m, name);
  }
});

const fault = (writes: number): fc.Arbitrary<QuotaFault> =>
  fc.record({
    at: fc.integer({ min: 1, max: writes + 1 }),
    persistent: fc.boolean(),
    mode: fc.constantFrom(...QUOTA_MODES),
  });

const OP_RUNS = runCount(20);
const CHAT_RUNS = runCount(4);

describe('reliability: the storage quota runs out at each write step', () => {
  afterAll(() => expectNoPollution('after all quota cases'));

  it(
    'every write operation leaves the store as before (STORAGE_FULL) or as without the fault',
    async () => {
      const seen = new Tally();
      const caseOf = fc
        .constantFrom(...OPS)
        .chain((op) => fc.tuple(fc.constant(op), fault(clean.get(op.name)!.writes)));
      await check(
        'quota exhausted at a write step of an operation',
        fc.asyncProperty(caseOf, async ([op, f]) => {
          const { writes, after: expected } = clean.get(op.name)!;
          const label = `${op.name} with write ${f.at} of ${writes} failing (${f.mode}${f.persistent ? ', and every later one' : ''})`;
          const { mem, name } = await seeded();
          try {
            const before = await snapshotDb(name);
            const [[result, hit], uncaught] = await uncaughtDuring(() =>
              within(
                withQuotaFault(f, () =>
                  op.run(mem).then(
                    (r) => r,
                    (e: unknown) => ({ status: 'REJECTED', error: String(e) }),
                  ),
                ),
                label,
              ),
            );
            expect(uncaught, `${label}: uncaught errors`).toEqual([]);
            const r = (result ?? { status: 'SUCCESS' }) as { status: string; code?: string };
            seen.add(`${op.name}: ${hit ? (r.code ?? r.status) : 'no fault'}`);
            const after = await snapshotDb(name);
            expectSound(after, label);
            if (r.status === 'SUCCESS') {
              expect(after, `${label}: succeeded but left another store`).toEqual(expected);
            } else {
              expect(after, `${label}: failed (${safeJson(r)}) but changed the store`).toEqual(
                before,
              );
              if (op.plain) expect(r.status, label).toBe('REJECTED');
              else expect(r, label).toMatchObject({ status: 'ERROR', code: 'STORAGE_FULL' });
            }
            if (!hit) expect(r.status, `${label}: no fault, yet it failed`).toBe('SUCCESS');
            // With space back, the store takes the same operation.
            const again = (await op.run(mem)) as { status: string } | undefined;
            if (!op.plain && r.status !== 'SUCCESS') ok(again!);
            expectSound(await snapshotDb(name), `${label}, then again`);
          } finally {
            await dispose(mem, name);
          }
        }),
        { runs: OP_RUNS },
      );
      seen.print('quota exhausted at a write step of an operation');
    },
    testTimeout(OP_RUNS),
  );

  describe('a chat turn with memory tool calls', () => {
    const SAVED = { plan: 'ship in March', note: MARKUP[2], pad: 'p'.repeat(2_000) };
    const replies: FakeReply[] = [
      {
        toolCalls: [
          { name: 'saveMemory', arguments: { path: 'Chat/Plan', content: SAVED } },
          { name: 'queryMemory', arguments: { path: 'Seed/One' } },
          { name: 'deleteMemory', arguments: { path: 'Seed/Two', recursive: true } },
        ],
      },
      { text: 'Saved the plan. It ships in March.' },
    ];
    let fake: FakeServer;
    let turnWrites = 0;

    async function turn(mem: MemoryApi) {
      const events: SessionEvent[] = [];
      const session = createChatSession({
        memory: mem,
        connector: createConnector({ endpoint: fake.url, retry: { attempts: 1, baseDelayMs: 0 } }),
        settings: { toolMode: 'native' },
      });
      // Conversation 1 is the seeded one.
      const result = await session.send(1, 'Remember the plan: ship in March.', undefined, (e) =>
        events.push(e),
      );
      return { result, events };
    }

    beforeAll(async () => {
      let at = 0;
      fake = await startFakeServer('llamacpp', {
        defaultReply: () => replies[at++ % replies.length],
        tokenDelayMs: 0,
        idleTimeoutMs: 60_000,
      });
      const { mem, name } = await seeded();
      const [{ result }, writes] = await countWrites(() => turn(mem));
      expect(result.status).toBe('answered');
      turnWrites = writes;
      await dispose(mem, name);
    });
    afterAll(() => fake?.close());

    it(
      'ends in time; every tool result matches the store; the tables agree',
      async () => {
        const seen = new Tally();
        await check(
          'quota exhausted at a write step of a chat turn',
          fc.asyncProperty(
            fc.constant(null).chain(() => fault(turnWrites)),
            async (f) => {
              const label = `chat turn with write ${f.at} of ${turnWrites} failing (${f.mode}${f.persistent ? ', and every later one' : ''})`;
              const { mem, name } = await seeded();
              try {
                const before = entriesByPath(await snapshotDb(name));
                const [[{ result, events }], uncaught] = await uncaughtDuring(() =>
                  within(
                    withQuotaFault(f, () => turn(mem)),
                    label,
                  ),
                );
                expect(uncaught, `${label}: uncaught errors`).toEqual([]);
                expect(['answered', 'error'], `${label}: ${safeJson(result)}`).toContain(
                  result.status,
                );
                const after = await snapshotDb(name);
                expectSound(after, label);
                const now = entriesByPath(after);
                const args = new Map<string, { content?: unknown }>();
                for (const e of events) {
                  if (e.type === 'tool-call') args.set(e.id, e.args as { content?: unknown });
                  if (e.type !== 'tool-result') continue;
                  const r = e.result as { status: string; code?: string };
                  seen.add(`${e.name}: ${r.code ?? r.status}`);
                  if (e.name === 'saveMemory') {
                    expect(
                      text(now.get('Chat/Plan')?.content),
                      `${label}: saveMemory said ${r.code ?? r.status}`,
                    ).toBe(
                      text(
                        r.status === 'SUCCESS'
                          ? args.get(e.id)?.content
                          : before.get('Chat/Plan')?.content,
                      ),
                    );
                  }
                  if (e.name === 'deleteMemory') {
                    expect(
                      now.has('Seed/Two/Deep'),
                      `${label}: deleteMemory said ${r.status}`,
                    ).toBe(r.status !== 'SUCCESS');
                  }
                  if (r.status !== 'SUCCESS') expect(r.code, label).toBe('STORAGE_FULL');
                }
                seen.add(`turn: ${result.status}`);
                // A tool result is never stored without the message with its call.
                expect(chatProblems(after), label).toEqual([]);
              } finally {
                await dispose(mem, name);
              }
            },
          ),
          { runs: CHAT_RUNS },
        );
        seen.print('quota exhausted at a write step of a chat turn');
      },
      testTimeout(CHAT_RUNS),
    );

    // Found by the property above: a round (the message with the calls and their results) is
    // now stored in one write, all or none.
    it('when the message with the tool calls cannot be stored, no tool message is', async () => {
      const { mem, name } = await seeded();
      try {
        // The quota has room for small rows but not for the message carrying the calls.
        const noRoom = {
          status: 'ERROR',
          code: 'STORAGE_FULL',
          message: 'Browser storage is full; nothing was written.',
        } as const;
        const full: MemoryApi = {
          ...mem,
          addMessage: (m) => (m.toolCalls?.length ? Promise.resolve(noRoom) : mem.addMessage(m)),
          addMessages: (ms) =>
            ms.some((m) => m.toolCalls?.length) ? Promise.resolve(noRoom) : mem.addMessages(ms),
        };
        await within(turn(full), 'chat turn');
        expect(chatProblems(await snapshotDb(name))).toEqual([]);
      } finally {
        await dispose(mem, name);
      }
    });
  });
});
