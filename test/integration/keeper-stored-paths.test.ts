// The memory keeper updates an entry whose path holds a hidden character (stored before such
// paths were refused, docs/design.md "Paths") like any entry it was shown.
import { afterEach, describe, expect, it } from 'vitest';
import { runKeeper, type KeeperExchange } from '../../src/chat/keeper';
import type { ServerInfo } from '../../src/llm/types';
import { closeAll, ok, openTestMemory } from './helpers';

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
const OLD = 'Family/A\u200bna'; // saved before hidden characters were refused

describe('keeper update of an entry stored with a hidden character', () => {
  it('is kept, like any update of an entry it was shown', async () => {
    const src = openTestMemory();
    ok(await src.mem.saveMemory('Family/Ana', 'Ana lives in Porto.', 0));
    const json = (await src.mem.exportJson()) as string;
    const { mem } = openTestMemory();
    ok(await mem.importJson(json.replaceAll('Family/Ana', OLD), 'merge'));
    expect((await mem.memoryIndex()).map((e) => e.path)).toEqual([OLD]);
    const conversationId = ok(await mem.createConversation('chat')).id;
    ok(await mem.recordTurn({ conversationId, role: 'user', text: EXCHANGE.user }));
    ok(await mem.recordTurn({ conversationId, role: 'assistant', text: EXCHANGE.assistant }));
    const answer = JSON.stringify({
      operations: [
        { op: 'add', path: 'Family/Lisbon', content: 'Ana moves to Lisbon in May.' },
        { op: 'update', path: OLD, content: 'Ana lives in Porto and moves to Lisbon in May.' },
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
});
