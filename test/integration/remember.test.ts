// "Remember this" in the engine (docs/chat.md): suggestMemoryPath proposes a path under the
// heading whose entries match the text (else Notes), and saveMemory with a turnId keeps the
// snapshot of that message's exchange, not of the conversation's last turns.
import { afterEach, describe, expect, it } from 'vitest';
import type { MemoryApi } from '../../src/memory/types';
import { closeAll, expectError, ok, openTestMemory } from './helpers';

afterEach(closeAll);

async function seedEntries(mem: MemoryApi): Promise<void> {
  ok(await mem.saveMemory('Family/Ana/Job', 'Ana works as a nurse at the city hospital.', 0));
  ok(await mem.saveMemory('Family/Ana/Birthday', 'Ana was born on 3 March; she loves tulips.', 0));
  ok(await mem.saveMemory('Recipes/Dinner/Risotto', 'Arborio rice, warm stock, parmesan.', 0));
  ok(await mem.saveMemory('Travel/Lisbon', 'Hotel in Alfama; download the maps first.', 0));
}

describe('suggestMemoryPath', () => {
  it("proposes a path under the heading whose entries the text matches, named from the text's words", async () => {
    const { mem } = openTestMemory();
    await seedEntries(mem);
    const r = ok(await mem.suggestMemoryPath('Ana is moving to Porto in May.'));
    expect(r).toEqual({
      status: 'SUCCESS',
      path: 'Family/Ana/Moving Porto May',
      heading: 'Family/Ana',
      basis: 'match',
    });
  });

  it('proposes Notes when no entry matches, and numbers a name already taken', async () => {
    const { mem } = openTestMemory();
    await seedEntries(mem);
    const text = 'The dentist appointment is on Thursday at nine.';
    const first = ok(await mem.suggestMemoryPath(text));
    expect(first).toEqual({
      status: 'SUCCESS',
      path: 'Notes/Dentist Appointment Thursday Nine',
      heading: 'Notes',
      basis: 'default',
    });
    ok(await mem.saveMemory(first.path, text, 0));
    // Now Notes holds a matching entry: the heading is matched, the name numbered.
    const again = ok(await mem.suggestMemoryPath(text));
    expect(again).toMatchObject({
      path: 'Notes/Dentist Appointment Thursday Nine 2',
      heading: 'Notes',
      basis: 'match',
    });
  });

  it('proposes Notes in an empty memory, and refuses a text with nothing in it', async () => {
    const { mem } = openTestMemory();
    expect(ok(await mem.suggestMemoryPath('Buy stamps'))).toMatchObject({
      path: 'Notes/Buy Stamps',
      basis: 'default',
    });
    for (const bad of ['', '   ', 42, undefined]) {
      expectError(await mem.suggestMemoryPath(bad), 'INVALID_ARGUMENT');
    }
  });
});

describe('saveMemory with a turnId', () => {
  /** A chat about Ana's move, then about dinner, with another chat's turns in between. */
  async function chat(mem: MemoryApi) {
    const c = ok(await mem.createConversation('Ana')).id;
    const other = ok(await mem.createConversation('Other')).id;
    const say = async (conversationId: number, role: 'user' | 'assistant', text: string) =>
      ok(await mem.recordTurn({ conversationId, role, text })).turnId;
    const asked = await say(c, 'user', 'Ana is moving to Porto in May.');
    await say(other, 'user', 'Unrelated words from another chat about gardening.');
    const answered = await say(c, 'assistant', 'That is a big change; she will need a flat.');
    await say(c, 'user', 'What should I cook tonight?');
    await say(c, 'assistant', 'Try a mushroom soup with crusty bread.');
    await say(c, 'user', 'And for dessert?');
    await say(c, 'assistant', 'Poached pears with cinnamon.');
    return { c, asked, answered };
  }

  const texts = async (mem: MemoryApi, path: string): Promise<[number, string][]> => {
    const entry = await mem.getEntry(path);
    if ('status' in entry) throw new Error(entry.message);
    return entry.contextChunks.map((ch) => [ch.turn_id, ch.text]);
  };

  it("keeps that message's exchange, not the conversation's last turns", async () => {
    const { mem } = openTestMemory();
    const { c, asked } = await chat(mem);
    const text = 'Ana is moving to Porto in May.';

    ok(await mem.saveMemory('Family/Ana/Move', text, 1000, { conversationId: c, turnId: asked }));
    const kept = await texts(mem, 'Family/Ana/Move');
    expect(kept).toContainEqual([asked, text]);
    expect(kept.map(([, t]) => t)).not.toContain('Poached pears with cinnamon.');
    expect(kept.map(([, t]) => t)).not.toContain('And for dessert?');
    // Nothing said after it: it did not lead to it.
    expect(kept.every(([turn]) => turn <= asked)).toBe(true);

    // Without it, the latest turns are the conversation's last ones.
    ok(await mem.saveMemory('Family/Ana/Latest', text, 1000, { conversationId: c }));
    expect((await texts(mem, 'Family/Ana/Latest')).map(([, t]) => t)).toContain(
      'Poached pears with cinnamon.',
    );
  });

  it('takes nothing said after that message, however like it', async () => {
    const { mem } = openTestMemory();
    const c = ok(await mem.createConversation('Ana')).id;
    const say = async (role: 'user' | 'assistant', text: string) =>
      ok(await mem.recordTurn({ conversationId: c, role, text })).turnId;
    const asked = await say('user', 'Ana is moving to Porto in May.');
    await say('assistant', 'Good to know.');
    await say('user', 'What should I cook tonight?');
    await say('assistant', 'A mushroom soup.');
    await say('user', 'Ana moving to Porto in May still surprises me.');
    ok(
      await mem.saveMemory('Family/Ana/Move', 'Ana is moving to Porto in May.', 1000, {
        conversationId: c,
        turnId: asked,
      }),
    );
    const kept = await texts(mem, 'Family/Ana/Move');
    expect(kept).toContainEqual([asked, 'Ana is moving to Porto in May.']);
    expect(kept.every(([turn]) => turn <= asked)).toBe(true);
  });

  it("an assistant message's turn takes it and the turn before it in its chat, not another chat's", async () => {
    const { mem } = openTestMemory();
    const { c, asked, answered } = await chat(mem);
    ok(
      await mem.saveMemory('Family/Ana/Flat', 'She will need a flat.', 1000, {
        conversationId: c,
        turnId: answered,
      }),
    );
    const kept = await texts(mem, 'Family/Ana/Flat');
    const turns = new Set(kept.map(([t]) => t));
    expect(turns.has(answered) && turns.has(asked)).toBe(true);
    expect(kept.map(([, t]) => t).join(' ')).not.toMatch(/gardening|Poached|dessert/);
  });

  it('refuses a turnId that is not a whole number, writing nothing', async () => {
    const { mem } = openTestMemory();
    expectError(await mem.saveMemory('Notes/X', 'x', 100, { turnId: -2 }), 'INVALID_ARGUMENT');
    expectError(await mem.getEntry('Notes/X'), 'NOT_FOUND');
  });
});
