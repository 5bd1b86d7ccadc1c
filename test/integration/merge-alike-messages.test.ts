// Merging a backup: a chat here that lost one of two messages alike (a KoboldAI save gives every
// message the import's time; "Go on." said twice) is not taken for the backup's chat.
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, ok, openTestMemory } from './helpers';

afterEach(closeAll);

describe('merge: a chat here that lost one of two messages alike', () => {
  it('is not taken for the backup chat: the backup chat comes in whole', async () => {
    const a = openTestMemory();
    const conv = ok(await a.mem.createConversation('Story'));
    // One moment, as an imported KoboldAI save stores them (every message at the import's time).
    for (const [role, text] of [
      ['user', 'Go on.'],
      ['assistant', 'The door creaks open.'],
      ['user', 'Go on.'],
      ['assistant', 'A lamp flickers inside.'],
    ] as const)
      ok(await a.mem.addMessage({ conversationId: conv.id, role, text }));
    const json = (await a.mem.exportJson()) as string;

    const b = openTestMemory();
    ok(await b.mem.importJson(json, 'merge'));
    const [here] = await b.mem.listConversations();
    const msgs = await b.mem.getMessages(here.id!);
    expect(new Set(msgs.map((m) => m.time.getTime())).size).toBe(1);
    // Deleted here by mistake; merging the backup should bring it back (as a chat of its own).
    ok(await b.mem.deleteMessage(msgs[2].id));
    const r = ok(await b.mem.importJson(json, 'merge'));
    const all = await Promise.all(
      (await b.mem.listConversations()).map(async (c) =>
        (await b.mem.getMessages(c.id!)).map((m) => m.text),
      ),
    );
    expect(
      all.some((texts) => texts.filter((t) => t === 'Go on.').length === 2),
      `chats here: ${JSON.stringify(all)}; chatsAlreadyHere ${r.chatsAlreadyHere}`,
    ).toBe(true);
  });
});
