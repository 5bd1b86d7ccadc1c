// An entry whose path holds a hidden character, stored before such paths were refused
// (docs/design.md, "Paths"): the memory keeper updates it like any entry it was shown, a rename
// away from it can be undone, and this app's own lorebook export brings it back where it was.
import { afterEach, describe, expect, it } from 'vitest';
import { runKeeper, type KeeperExchange } from '../../src/chat/keeper';
import type { ServerInfo } from '../../src/llm/types';
import { closeAll, memoryWithStored, ok } from './helpers';

afterEach(closeAll);

const EXCHANGE: KeeperExchange = {
  user: 'My sister Ana is moving to Lisbon in May. Any tips for her?',
  assistant: 'How exciting! Lisbon is lovely in spring; she should find a flat near a tram line.',
};
const SERVER: ServerInfo = {
  kind: 'llamacpp',
  baseUrl: 'http://x',
  model: 'm',
  contextSize: 8192,
  tokenizer: false,
} as ServerInfo;
const CAFE = 'Lore/Ca\u200bfe';

describe('an entry stored with a hidden character', () => {
  it('the keeper updates it, like any entry it was shown', async () => {
    const old = 'Family/A\u200bna';
    const { mem } = await memoryWithStored(old, 'Ana lives in Porto.');
    expect((await mem.memoryIndex()).map((e) => e.path)).toEqual([old]);
    const conversationId = ok(await mem.createConversation('chat')).id;
    ok(await mem.recordTurn({ conversationId, role: 'user', text: EXCHANGE.user }));
    ok(await mem.recordTurn({ conversationId, role: 'assistant', text: EXCHANGE.assistant }));
    const answer = JSON.stringify({
      operations: [
        { op: 'add', path: 'Family/Lisbon', content: 'Ana moves to Lisbon in May.' },
        { op: 'update', path: old, content: 'Ana lives in Porto and moves to Lisbon in May.' },
      ],
    });
    const outcome = await runKeeper({
      memory: mem,
      connector: {
        structured: async () => ({
          text: answer,
          constrained: true,
          finishReason: 'stop',
          aborted: false,
        }),
      },
      server: SERVER,
      exchanges: [EXCHANGE],
      conversationId,
    });
    // The answer was accepted (parseKeeperAnswer: an update may name such a path), yet:
    expect(outcome.message ?? '').not.toMatch(/invisible character/);
    expect(outcome.status).toBe('kept');
  });

  it('a rename away from it can be undone (moved back)', async () => {
    const { mem } = await memoryWithStored(CAFE, 'The cafe opens at dawn.');
    ok(await mem.moveMemory(CAFE, 'Lore/Cafe'));
    // The explorer's Undo of that move.
    const undo = await mem.moveMemory('Lore/Cafe', CAFE);
    expect(undo, JSON.stringify(undo)).toMatchObject({ status: 'SUCCESS' });
  });

  it('this app’s lorebook export brings it back where it was', async () => {
    const { mem } = await memoryWithStored(CAFE, 'The cafe opens at dawn.');
    const book = await mem.exportLorebook('Lore');
    expect(typeof book).toBe('string');
    // Same store, unchanged: nothing to write, nothing left out.
    const same = ok(await mem.importFile({ name: 'Lore.json', data: book as string }));
    expect(same.skipped).toEqual([]);
    // Deleted here, then put back from the export.
    ok(await mem.deleteMemory(CAFE));
    const back = ok(await mem.importFile({ name: 'Lore.json', data: book as string }));
    expect(back.skipped).toEqual([]);
    expect((await mem.memoryIndex()).map((e) => e.path)).toHaveLength(1);
  });
});
