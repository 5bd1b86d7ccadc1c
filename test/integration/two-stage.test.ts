// The two-stage vector search through the engine (docs/search.md, "Two stages"): with the
// sign-code pass on and few candidates (64 of hundreds of chunks), every write path keeps the
// codes current: a sentence's own text finds it by meaning alone after a save, another
// connection's write (a second tab, a sync arrival), an edit and an import; a deleted one is
// never found again.
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, openTestMemory } from './helpers';

afterEach(closeAll);

const NAMES = 'Ana Ben Cleo Dario Elif Farid Greta Hugo Ines Jonas'.split(' ');
const VERBS = 'painted repaired sold borrowed cleaned photographed carried hid found'.split(' ');
const THINGS = 'bicycle piano kayak lantern telescope sofa violin canoe tractor'.split(' ');
const PLACES = 'in the garage|at the harbour|near the bakery|behind the school|on the roof'.split(
  '|',
);

/** Sentence `i`: a distinct set of words for each i below 4,050. */
const sentence = (i: number) =>
  `${NAMES[i % 10]} ${VERBS[Math.floor(i / 10) % 9]} the ${THINGS[Math.floor(i / 90) % 9]} ${PLACES[Math.floor(i / 810) % 5]}.`;

/** Turns of four sentences, from sentence `first`. */
const turnText = (first: number) => [0, 1, 2, 3].map((j) => sentence(first + j)).join(' ');

/** Sign codes from the first chunk; the int8 pass sees only the 64 nearest by sign code. */
const SIGNS = { quantiseFrom: 1, signFrom: 1, signShare: 0, signMin: 0 };

describe('two-stage vector search through the engine', () => {
  it('every write path keeps the sign codes current', async () => {
    const a = openTestMemory({ vectorIndex: SIGNS });
    const findsItself = async (text: string) => {
      const hits = await a.mem.searchChunks(null, text, 5, { signals: 'semantic' });
      return hits.some((h) => h.chunk.text === text && h.similarity > 0.999);
    };
    for (let t = 0; t < 100; t++) {
      const r = await a.mem.recordTurn({
        conversationId: 1 + (t % 5),
        role: 'user',
        text: turnText(t * 4),
      });
      expect(r.status).toBe('SUCCESS');
    }
    expect(await a.mem.indexInfo()).toMatchObject({ chunks: 400, signCodes: true });
    for (const i of [0, 123, 256, 399]) expect(await findsItself(sentence(i))).toBe(true);

    // Another connection writes (a second tab, or sync storing what arrived).
    const b = openTestMemory({ name: a.name });
    for (let t = 100; t < 110; t++)
      await b.mem.recordTurn({ conversationId: 7, role: 'user', text: turnText(t * 4) });
    for (const i of [400, 433, 439]) expect(await findsItself(sentence(i))).toBe(true);

    // An edit: the message gets new text, its old sentences leave the index, the new ones enter.
    const msg = await a.mem.addMessage({ conversationId: 2, role: 'user', text: turnText(600) });
    if (msg.status !== 'SUCCESS') throw new Error('no message');
    await a.mem.recordTurn({
      conversationId: 2,
      role: 'user',
      text: turnText(600),
      turnId: msg.id,
    });
    expect(await findsItself(sentence(601))).toBe(true);
    expect((await a.mem.updateMessage(msg.id, { text: turnText(700) })).status).toBe('SUCCESS');
    await a.mem.recordTurn({
      conversationId: 2,
      role: 'user',
      text: turnText(700),
      turnId: msg.id,
    });
    expect(await findsItself(sentence(601))).toBe(false);
    for (const i of [700, 702, 703]) expect(await findsItself(sentence(i))).toBe(true);

    // A delete: its sentences are not found again.
    expect((await a.mem.deleteMessage(msg.id)).status).toBe('SUCCESS');
    for (const i of [700, 702]) expect(await findsItself(sentence(i))).toBe(false);
    expect(await findsItself(sentence(123))).toBe(true);

    // An import (merge) of another memory's chats.
    const other = openTestMemory();
    for (let t = 0; t < 5; t++)
      await other.mem.recordTurn({ conversationId: 1, role: 'user', text: turnText(800 + t * 4) });
    const backup = await other.mem.exportJson();
    if (typeof backup !== 'string') throw new Error('export failed');
    expect((await a.mem.importJson(backup, 'merge')).status).toBe('SUCCESS');
    for (const i of [800, 811, 819]) expect(await findsItself(sentence(i))).toBe(true);
  });
});
