// Recall from every past chat (issue 22): recallMemory ranks saved entries and past turns
// together, one hit per turn, keeps unrelated turns out, leaves out what it is told to, and does
// not repeat a turn an entry's snapshot carries; searchConversations gives the model the turns
// alone with their chat, date and speaker.
import { afterEach, describe, expect, it } from 'vitest';
import type { MemoryApi, RecallHit, TurnRecallHit } from '../../src/memory/types';
import { closeAll, DAY, ok, openTestMemory } from './helpers';

afterEach(closeAll);

/** Records `lines` (user, then assistant, alternately) as one chat named `title`. */
async function chat(mem: MemoryApi, title: string, lines: string[]): Promise<number[]> {
  const conv = ok(await mem.createConversation(title));
  const ids: number[] = [];
  for (const [i, text] of lines.entries()) {
    const r = ok(
      await mem.recordTurn({
        conversationId: conv.id,
        role: i % 2 === 0 ? 'user' : 'assistant',
        text,
      }),
    );
    ids.push(r.turnId);
  }
  return ids;
}

const turns = (hits: RecallHit[] | unknown): TurnRecallHit[] =>
  Array.isArray(hits) ? (hits as RecallHit[]).filter((h) => h.kind === 'turn') : [];

describe('recallMemory with past turns', () => {
  it('finds a fact told in another chat, with its chat, date, speaker and whole text', async () => {
    const { mem, clock } = openTestMemory();
    const told = clock.t;
    const [fact] = await chat(mem, 'Family news', [
      'My sister Ana is moving to Lisbon in May.',
      'That is exciting news for her!',
      'I also need to buy a new bicycle helmet before the summer.',
      'A good helmet is worth it.',
    ]);
    clock.advanceDays(3);
    await chat(mem, 'Work', ['The quarterly report is due on Friday.', 'Good luck with it.']);
    const hits = await mem.recallMemory('Where is my sister Ana moving to?', 5);
    const found = turns(hits);
    expect(found[0]).toMatchObject({
      kind: 'turn',
      turnId: fact,
      role: 'user',
      text: 'My sister Ana is moving to Lisbon in May.',
      chat: 'Family news',
    });
    expect(found[0].time.getTime()).toBe(told);
    expect(found[0].relevance).toBeGreaterThan(0.3);
    // The chat's other topics do not ride along on its words.
    const texts = found.map((h) => h.text);
    expect(texts.some((t) => t.includes('helmet'))).toBe(false);
    expect(texts.some((t) => t.includes('report'))).toBe(false);
  });

  it('with a short history, a question about what was never told recalls no turn sharing one common word', async () => {
    const { mem, clock } = openTestMemory();
    await chat(mem, 'Weekend', [
      'My sister Ana is moving to Lisbon in May.',
      'That is exciting news for her!',
      'Shall we go to the cinema on Friday?',
      'Yes, the new film with the robots sounds fun.',
    ]);
    clock.advanceDays(1);
    // Only "go" of these questions is in any chat: measured against the words memory holds,
    // the cinema line would match each fully.
    for (const q of [
      'When did Melanie go to the dentist about her tooth?',
      'Where did Tom go skiing last winter?',
    ])
      expect(turns(await mem.recallMemory(q, 10)), q).toEqual([]);
    // A question about what was told still finds it.
    const found = turns(await mem.recallMemory('When will my sister Ana go to Lisbon?', 10));
    expect(found[0]?.text).toBe('My sister Ana is moving to Lisbon in May.');
  });

  it('in one long chat, lifts the turn whose sitting, all told, answers the question', async () => {
    // One chat over two days: the same helmet line each day, and the second day's sitting is
    // about the bicycle trip (two turns away from its helmet line, not next to it).
    const helmets = async (pause: boolean) => {
      const { mem, clock } = openTestMemory();
      const conv = ok(await mem.createConversation('Everything'));
      const say = async (text: string) =>
        ok(await mem.recordTurn({ conversationId: conv.id, role: 'user', text })).turnId;
      const first = await say('I need a new helmet.');
      await say('The oven needs cleaning.');
      await say('The plumber comes on Monday.');
      await say('The cat sleeps all day.');
      if (pause) clock.advanceDays(1);
      const second = await say('I need a new helmet.');
      await say('The kettle is broken.');
      await say('The rent is due soon.');
      await say('The bicycle trip to the coast is in June.');
      const found = turns(await mem.recallMemory('a helmet for the bicycle trip', 10));
      const of = (id: number) => found.find((h) => h.turnId === id)?.relevance ?? 0;
      return { first: of(first), second: of(second) };
    };
    const sittings = await helmets(true);
    expect(sittings.first).toBeGreaterThan(0);
    expect(sittings.second).toBeGreaterThan(sittings.first);
    // Said in one sitting, the two lines weigh the same: the sitting, not the words, told them apart.
    const one = await helmets(false);
    expect(one.second).toBeCloseTo(one.first, 6);
  });

  it('keeps a sitting’s other topics out of a save’s snapshot', async () => {
    const { mem, clock } = openTestMemory();
    const conv = ok(await mem.createConversation('Everything'));
    const say = (text: string) => mem.recordTurn({ conversationId: conv.id, role: 'user', text });
    // Monday's sitting is about the bicycle trip; a line two turns from those shares only "trip".
    await say('I need a new helmet for my bicycle.');
    await say('The bicycle needs new tyres and a bicycle pump.');
    await say('The cat sleeps all day.');
    await say('The kettle is broken.');
    await say('The trip starts early.');
    await say('The window sticks.');
    clock.advanceDays(1);
    await say('The oven needs cleaning.');
    await say('The plumber comes at nine.');
    await say('The rent is due soon.');
    ok(
      await mem.saveMemory(
        'Bicycle/Helmet',
        'A helmet, tyres and a pump for the bicycle trip',
        undefined,
        {
          conversationId: conv.id,
        },
      ),
    );
    const entry = await mem.getEntry('Bicycle/Helmet');
    if ('status' in entry) throw new Error(entry.message);
    const kept = entry.contextChunks.map((c) => c.text);
    expect(kept).toContain('I need a new helmet for my bicycle.');
    // Its sitting's words would lift it over the floor; its own match does not reach it.
    expect(kept).not.toContain('The trip starts early.');
  });

  it('gives one hit per turn, however many of its sentences match', async () => {
    const { mem } = openTestMemory();
    await chat(mem, 'Garden', [
      'The tomatoes need water every morning. The tomatoes grow best in the sun. Tomatoes hate frost.',
      'Tomatoes are a rewarding plant.',
    ]);
    const found = turns(await mem.recallMemory('tomatoes sun water frost', 10));
    const ids = found.map((h) => h.turnId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(found.length).toBeGreaterThan(0);
  });

  it('leaves out a chat’s latest turns when told to, and turns entirely with turns: false', async () => {
    const { mem } = openTestMemory();
    const conv = ok(await mem.createConversation('Trip'));
    const early = ok(
      await mem.recordTurn({
        conversationId: conv.id,
        role: 'user',
        text: 'We fly to Oslo on the ninth.',
      }),
    );
    const late = ok(
      await mem.recordTurn({
        conversationId: conv.id,
        role: 'user',
        text: 'When do we fly to Oslo?',
      }),
    );
    const all = turns(await mem.recallMemory('fly to Oslo', 10)).map((h) => h.turnId);
    expect(all).toEqual(expect.arrayContaining([early.turnId, late.turnId]));
    const past = turns(
      await mem.recallMemory('fly to Oslo', 10, {
        exclude: { conversationId: conv.id, fromTurnId: late.turnId },
      }),
    ).map((h) => h.turnId);
    expect(past).toEqual([early.turnId]);
    expect(turns(await mem.recallMemory('fly to Oslo', 10, { turns: false }))).toEqual([]);
    expect(
      await mem.recallMemory('fly to Oslo', 10, { exclude: { conversationId: 'x' } } as never),
    ).toMatchObject({ status: 'ERROR', code: 'INVALID_ARGUMENT' });
  });

  it('ranks entries and turns in one list, and does not repeat a turn an entry carries', async () => {
    const { mem } = openTestMemory();
    const [told] = await chat(mem, 'Pets', [
      'Our cat Miso only eats salmon flavoured food.',
      'Noted, salmon for Miso.',
    ]);
    const saved = ok(await mem.saveMemory('Pets/Miso', 'Miso the cat eats only salmon food'));
    expect(saved.chunksStored).toBeGreaterThan(0);
    const hits = await mem.recallMemory('What does Miso the cat eat?', 5);
    expect(Array.isArray(hits)).toBe(true);
    if (!Array.isArray(hits)) return;
    expect(hits[0]).toMatchObject({ kind: 'entry', path: 'Pets/Miso' });
    // The entry's snapshot holds the turn that told it: that turn is not repeated.
    expect(hits[0].kind === 'entry' && hits[0].turnIds).toContain(told);
    expect(turns(hits).map((h) => h.turnId)).not.toContain(told);
    // Best first, whatever the kind.
    const rel = hits.map((h) => h.relevance);
    expect([...rel].sort((a, b) => b - a)).toEqual(rel);
  });

  it('brings the reply to a question it recalls, right after it, though the reply names nothing asked', async () => {
    const { mem, clock } = openTestMemory();
    const [, asked, answer] = await chat(mem, 'New flat', [
      'I just moved into a new flat near the river.',
      'Congratulations! Do you keep any pets at the new flat?',
      'Yes, two cats called Luna and Oliver.',
      'Lovely names.',
    ]);
    clock.advanceDays(2);
    await chat(mem, 'Work', ['The quarterly report is due on Friday.', 'Good luck with it.']);
    const found = turns(await mem.recallMemory('Which pets do I keep at my flat?', 10));
    const at = found.findIndex((h) => h.turnId === asked);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(found[at + 1]).toMatchObject({
      turnId: answer,
      role: 'user',
      text: 'Yes, two cats called Luna and Oliver.',
      chat: 'New flat',
      repliesTo: asked,
      relevance: found[at].relevance,
    });
    const ids = found.map((h) => h.turnId);
    expect(new Set(ids).size).toBe(ids.length);
    // The model's search finds it the same way.
    const searched = ok(await mem.searchConversations('Which pets do I keep at my flat?'));
    expect(searched.results.map((r) => r.text)).toContain('Yes, two cats called Luna and Oliver.');
  });

  it('brings no reply to a turn that does not ask, nor one left out of the recall', async () => {
    const { mem, clock } = openTestMemory();
    const [, said] = await chat(mem, 'New flat', [
      'I just moved into a new flat near the river.',
      'Congratulations! Pets would make the new flat feel like home.',
      'Yes, two cats called Luna and Oliver.',
      'Lovely names.',
    ]);
    clock.advanceDays(2);
    const found = turns(await mem.recallMemory('Which pets do I keep at my flat?', 10));
    expect(found.map((h) => h.turnId)).toContain(said);
    expect(found.map((h) => h.text)).not.toContain('Yes, two cats called Luna and Oliver.');

    // The chat goes on with a question whose reply is the message being answered now.
    const conv = ok(await mem.createConversation('Today'));
    const ask = ok(
      await mem.recordTurn({
        conversationId: conv.id,
        role: 'assistant',
        text: 'Do you keep any pets at the new flat?',
      }),
    );
    const reply = ok(
      await mem.recordTurn({ conversationId: conv.id, role: 'user', text: 'Which pets, you ask?' }),
    );
    const past = turns(
      await mem.recallMemory('Which pets do I keep at my flat?', 10, {
        exclude: { conversationId: conv.id, fromTurnId: reply.turnId },
      }),
    );
    expect(past.map((h) => h.turnId)).toContain(ask.turnId);
    expect(past.map((h) => h.turnId)).not.toContain(reply.turnId);
  });

  it('brings the answer the person saw: past a reply regenerated, the words before a tool call, a reply deleted', async () => {
    const { mem, clock } = openTestMemory();
    const conv = ok(await mem.createConversation('Trip'));
    const say = async (
      role: 'user' | 'assistant' | 'tool',
      text: string,
      more: { meta?: Record<string, unknown>; toolCalls?: unknown[]; index?: boolean } = {},
    ) => {
      const { id } = ok(
        await mem.addMessage({
          conversationId: conv.id,
          role,
          text,
          meta: more.meta,
          toolCalls: more.toolCalls as never,
        }),
      );
      if (more.index !== false)
        ok(await mem.recordTurn({ conversationId: conv.id, role, text, turnId: id }));
      return id;
    };
    const QUESTION = 'Which city should I visit in spring for the cherry blossoms?';
    // Regenerated: the second alternative is the one shown.
    const regenerated = await say('user', QUESTION, { meta: { alt: 1 } });
    await say('assistant', 'Hmm, let me think about that.');
    const shown = await say('assistant', 'Kyoto, without doubt: go in early April.', {
      meta: { alt: 1 },
    });
    // Answered after a tool call, whose words come first (as a tool round stores them).
    const viaTool = await say('user', 'Which town should I visit in autumn for the maple leaves?');
    await say('assistant', 'Let me look at what you told me before.', {
      toolCalls: [{ id: 'c1', name: 'searchConversations', arguments: { query: 'autumn' } }],
    });
    await say('tool', '{"status":"SUCCESS","results":[]}', { index: false });
    const afterTool = await say('assistant', 'Nikko: the hills turn red in early November.');
    // A reply deleted from a running index, then answered again.
    const deletedQ = await say(
      'user',
      'Which village should I visit in winter for the snow lanterns?',
    );
    const failed = await say('assistant', 'Sorry, something went wrong.');
    await mem.recallMemory('anything at all', 3); // the index is loaded and kept current from here
    ok(await mem.deleteMessage(failed));
    const again = await say('assistant', 'Otaru: the lantern festival is in February.');
    clock.advanceDays(2);

    for (const [question, asked, answer] of [
      [QUESTION, regenerated, shown],
      ['Which town should I visit in autumn for the maple leaves?', viaTool, afterTool],
      ['Which village should I visit in winter for the snow lanterns?', deletedQ, again],
    ] as const) {
      const found = turns(await mem.recallMemory(question, 10));
      const at = found.findIndex((h) => h.turnId === asked);
      expect(at, question).toBeGreaterThanOrEqual(0);
      expect(found[at + 1], question).toMatchObject({ turnId: answer, repliesTo: asked });
    }
  });

  it('says nothing for a question no chat answers', async () => {
    const { mem } = openTestMemory();
    await chat(mem, 'Cooking', ['I baked sourdough bread today.', 'It smells wonderful.']);
    expect(turns(await mem.recallMemory('quarterly tax filing deadline', 5))).toEqual([]);
  });
});

describe('searchConversations', () => {
  it('returns past turns with chat, ISO date and speaker, best first, within its limit', async () => {
    const { mem, clock } = openTestMemory();
    await chat(mem, 'Holiday plans', [
      'I booked a cabin in Norway for July.',
      'A cabin in Norway sounds lovely.',
    ]);
    clock.advance(DAY);
    await chat(mem, 'Other', ['The printer is out of toner again.', 'Buy a spare cartridge.']);
    const r = await mem.searchConversations('cabin in Norway', 1);
    expect(r).toMatchObject({ status: 'SUCCESS', query: 'cabin in Norway' });
    if (!('results' in r)) return;
    expect(r.results).toHaveLength(1);
    expect(r.results[0]).toMatchObject({ chat: 'Holiday plans', speaker: expect.any(String) });
    expect(r.results[0].text).toContain('Norway');
    expect(new Date(r.results[0].date).toISOString()).toBe(r.results[0].date);
  });

  it('refuses a query that is not text and a limit out of range, writing nothing', async () => {
    const { mem } = openTestMemory();
    expect(await mem.searchConversations(42)).toMatchObject({
      status: 'ERROR',
      code: 'INVALID_ARGUMENT',
    });
    expect(await mem.searchConversations('cats', 21)).toMatchObject({
      status: 'ERROR',
      code: 'INVALID_ARGUMENT',
    });
    expect(await mem.searchConversations('cats')).toEqual({
      status: 'SUCCESS',
      query: 'cats',
      results: [],
    });
  });
});

describe('a heading as a whole', () => {
  it('lifts the entry whose heading, all told, answers the question; alone it does not pass a floor', async () => {
    const { mem, clock } = openTestMemory();
    // Two entries say the same about a deadline; only one sits with the tax return's other entries.
    ok(await mem.saveMemory('Admin/April/Deadline', 'due on the last day of April', 0));
    ok(
      await mem.saveMemory('Admin/April/Receipts', 'tax return receipts are in the blue folder', 0),
    );
    ok(await mem.saveMemory('Admin/April/Adviser', 'the tax return adviser is Maria', 0));
    clock.advance(60_000);
    ok(await mem.saveMemory('Garden/Shed/Deadline', 'due on the last day of April', 0));
    ok(await mem.saveMemory('Garden/Shed/Paint', 'green paint for the shed door', 0));
    // By words alone, so the two equal entries tie on their own (the newer, Garden's, first).
    const r = await mem.queryMemoryHeading('', 'tax return deadline', 0, { signals: 'lexical' });
    expect(r.status).toBe('SUCCESS');
    if (r.status !== 'SUCCESS') return;
    const order = r.children.map((c) => c.path);
    expect(order.indexOf('Admin/April/Deadline')).toBeLessThan(
      order.indexOf('Garden/Shed/Deadline'),
    );
    // The adviser entry matches through its own words, not its heading's: recall keeps it; an
    // entry that matches nothing itself is not recalled for its heading's words.
    const hits = await mem.recallMemory('tax return adviser receipts', 10, { turns: false });
    const paths = Array.isArray(hits) ? hits.map((h) => (h.kind === 'entry' ? h.path : '')) : [];
    expect(paths).toContain('Admin/April/Adviser');
    expect(paths).not.toContain('Admin/April/Deadline');
  });
});

describe('recall and regenerated replies', () => {
  it('leaves out a reply alternative the person did not keep; choosing it again brings it back', async () => {
    const { mem } = openTestMemory();
    const conv = ok(await mem.createConversation('Spring plans'));
    const say = async (
      role: 'user' | 'assistant',
      text: string,
      meta?: Record<string, unknown>,
    ) => {
      const { id } = ok(await mem.addMessage({ conversationId: conv.id, role, text, meta }));
      ok(await mem.recordTurn({ conversationId: conv.id, role, text, turnId: id }));
      return id;
    };
    // The first reply, regenerated; the second alternative is the one shown.
    const ask = await say('user', 'Which city should I visit in spring?', { alt: 1 });
    await say('assistant', 'Visit Porto in spring: the azulejos and the river walks.');
    await say('assistant', 'Visit Kyoto in spring: the cherry blossoms along the canals.', {
      alt: 1,
    });
    await say('user', 'Thanks, I will book the trip soon.');
    await say('assistant', 'Have a lovely trip!');
    await chat(mem, 'Later', ['Something else entirely about bread baking.', 'Sourdough it is.']);

    const said = async (q: string) =>
      turns(await mem.recallMemory(q, 10)).map((t) => t.text.split(':')[0]);
    expect(await said('Which city in spring, Porto or Kyoto?')).toContain('Visit Kyoto in spring');
    expect(await said('Which city in spring, Porto or Kyoto?')).not.toContain(
      'Visit Porto in spring',
    );
    const found = ok(await mem.searchConversations('Porto azulejos river walks'));
    expect(found.results.map((r) => r.text)).not.toContain(
      'Visit Porto in spring: the azulejos and the river walks.',
    );

    // Chosen again: recalled again, and the other one left out.
    ok(await mem.selectAlternative(ask, 0));
    expect(await said('Which city in spring, Porto or Kyoto?')).toContain('Visit Porto in spring');
    expect(await said('Which city in spring, Porto or Kyoto?')).not.toContain(
      'Visit Kyoto in spring',
    );

    // An alternative chosen that has no messages (its regeneration failed): the newest shows.
    ok(await mem.updateMessage(ask, { meta: { alt: 2 } }));
    expect(await said('Which city in spring, Porto or Kyoto?')).toContain('Visit Kyoto in spring');
    expect(await said('Which city in spring, Porto or Kyoto?')).not.toContain(
      'Visit Porto in spring',
    );
  });

  it("tells a reply's alternative by its own chat's question when another chat wrote in between", async () => {
    const { mem } = openTestMemory();
    const trip = ok(await mem.createConversation('Spring plans'));
    const other = ok(await mem.createConversation('Bread'));
    const say = async (
      conversationId: number,
      role: 'user' | 'assistant',
      text: string,
      alt?: number,
    ) => {
      const meta = alt === undefined ? undefined : { alt };
      const { id } = ok(await mem.addMessage({ conversationId, role, text, meta }));
      ok(await mem.recordTurn({ conversationId, role, text, turnId: id }));
      return id;
    };
    // The question names the second alternative; a message of another chat (a second tab) came
    // between it and its replies.
    await say(trip.id, 'user', 'Which city should I visit in spring?', 1);
    await say(other.id, 'user', 'How long should sourdough rise?');
    await say(trip.id, 'assistant', 'Visit Porto in spring: the azulejos and the river walks.');
    await say(
      trip.id,
      'assistant',
      'Visit Kyoto in spring: the cherry blossoms along the canals.',
      1,
    );
    const said = turns(await mem.recallMemory('Which city in spring, Porto or Kyoto?', 10)).map(
      (t) => t.text.split(':')[0],
    );
    expect(said).toContain('Visit Kyoto in spring');
    expect(said).not.toContain('Visit Porto in spring');
  });
});
