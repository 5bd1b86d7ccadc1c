// The decisions of recall (issue 22), tested alone: a chat as a whole as evidence for its
// sentences (the word index's groups), one hit per turn, the one ranking of entries and turns,
// recall's options, and what the chat turn asks and keeps of it.
import { describe, expect, it } from 'vitest';
import { Bm25Index } from '../../src/memory/lexical/bm25-index';
import {
  asks,
  bestPerTurn,
  excerpt,
  mergeRecall,
  recallOptions,
  savedFrom,
  turnHit,
} from '../../src/memory/tools/recall';
import type { Chunk, EntryRecallHit, TurnRecallHit } from '../../src/memory/types';
import {
  noneRecalled,
  noteRecalled,
  recallRequest,
  recalledMeta,
  recalledTurnsOf,
} from '../../src/chat/recall';

const row = (turnId: number, conversationId = 1, text = `sentence of ${turnId}`): Chunk => ({
  id: turnId * 10,
  conversationId,
  turnId,
  sentenceId: 0,
  role: 'user',
  text,
  tokenCount: 3,
  embedding: new Float32Array(0),
  model: 'm',
  time: new Date(0),
});
const hit = (turnId: number, match: number, ownMatch = match, conversationId = 1) => ({
  id: turnId * 10,
  turnId,
  conversationId,
  match,
  ownMatch,
});
const entry = (path: string, relevance: number, turnIds: number[] = []): EntryRecallHit => ({
  kind: 'entry',
  path,
  content: path,
  relevance,
  why: { terms: [], match: relevance, lexical: relevance, semantic: 0, fromSnapshot: false },
  turnIds,
});
const turn = (turnId: number, relevance: number, conversationId = 1): TurnRecallHit => ({
  kind: 'turn',
  conversationId,
  turnId,
  role: 'user',
  text: `turn ${turnId}`,
  best: `turn ${turnId}`,
  time: new Date(0),
  chat: 'Chat',
  relevance,
  terms: [],
});

describe('a chat as a whole (the word index’s groups)', () => {
  it('lifts the sentences of the chat whose words, all told, answer the question', () => {
    const idx = new Bm25Index();
    // Two chats each hold a sentence with "helmet"; only chat 1 is about the bicycle trip.
    // Chat 2's comes first: on a tie, the one indexed first leads.
    idx.add(4, 'I need a new helmet', 2, 201);
    idx.add(5, 'the oven needs cleaning', 2, 202);
    idx.add(1, 'I need a new helmet', 1, 101);
    idx.add(2, 'the bicycle trip to the coast is in June', 1, 102);
    idx.add(3, 'bicycle tyres and a bicycle pump', 1, 103);
    const q = idx.prepare('helmet for the bicycle trip');
    const chats = idx.groupMatches(q);
    expect(chats.get(1)!).toBeGreaterThan(chats.get(2)!);
    const weights = { parent: 1, neighbours: 0, group: 0.5 };
    const rank = (top: { key: number }[], key: number) => top.findIndex((m) => m.key === key);
    // Without the chats' evidence the two helmet sentences tie, chat 2's first.
    const plain = idx.searchTop(q, null, 10, weights);
    expect(rank(plain, 4)).toBeLessThan(rank(plain, 1));
    // With it, chat 1's leads; their own relevance is the same. (Without times a chat is one
    // sitting: its episode's match is its chat's.)
    const sittings = idx.episodeMatches(q);
    expect(sittings[idx.episodeOf(1)!]).toBeCloseTo(chats.get(1)!, 6);
    const top = idx.searchTop(q, null, 10, weights, [], sittings);
    expect(rank(top, 1)).toBeLessThan(rank(top, 4));
    const of = (key: number) => top.find((m) => m.key === key)!;
    expect(of(1).relevance).toBeCloseTo(of(4).relevance, 6);
  });

  it('counts a word every chat holds (a speaker’s name) for little', () => {
    const idx = new Bm25Index();
    idx.add(1, 'Caroline: I went to the support group', 1, 11);
    idx.add(2, 'Caroline: hello again', 2, 21);
    idx.add(3, 'Caroline: nice weather', 3, 31);
    const chats = idx.groupMatches(idx.prepare('Caroline support group'));
    expect(chats.get(1)!).toBeGreaterThan(0.8);
    expect(chats.get(2)!).toBeLessThan(0.1);
  });

  it('forgets a removed sentence’s words in its chat', () => {
    const idx = new Bm25Index();
    idx.add(1, 'the lighthouse keeper', 1, 11);
    idx.add(2, 'a rowing boat', 1, 12);
    idx.add(3, 'the lighthouse on the cliff', 2, 21);
    idx.add(4, 'something else', 3, 31);
    const chat1 = () => idx.groupMatches(idx.prepare('rowing boat lighthouse')).get(1)!;
    const before = chat1();
    idx.remove(1);
    expect(chat1()).toBeLessThan(before);
  });
});

describe('a chat’s sittings (the word index’s episodes)', () => {
  const HOUR = 3_600_000;
  const GAP = 30 * 60_000;

  it('splits a chat at a pause longer than the gap, and only there', () => {
    const idx = new Bm25Index({ episodeGap: GAP });
    idx.add(1, 'first sitting, first turn', 1, 11, 0);
    idx.add(2, 'first sitting, twenty minutes on', 1, 12, 20 * 60_000);
    idx.add(3, 'another chat meanwhile', 2, 21, 25 * 60_000);
    idx.add(4, 'first sitting still: forty minutes after the first turn', 1, 13, 40 * 60_000);
    idx.add(5, 'the next day', 1, 14, 24 * HOUR);
    expect(idx.episodeOf(2)).toBe(idx.episodeOf(1));
    expect(idx.episodeOf(4)).toBe(idx.episodeOf(1));
    expect(idx.episodeOf(3)).not.toBe(idx.episodeOf(1));
    expect(idx.episodeOf(5)).not.toBe(idx.episodeOf(1));
    expect(idx.episodeCount).toBe(3);
    // Without times a chat stays one sitting; without a gap, every chat is one.
    const untimed = new Bm25Index({ episodeGap: GAP });
    untimed.add(1, 'a', 1, 11);
    untimed.add(2, 'b', 1, 12);
    expect(untimed.episodeCount).toBe(1);
    const noGap = new Bm25Index();
    noGap.add(1, 'a', 1, 11, 0);
    noGap.add(2, 'b', 1, 12, 10 * 24 * HOUR);
    expect(noGap.episodeCount).toBe(1);
  });

  it('lifts the sentences of the sitting whose words answer the question, in one long chat', () => {
    const idx = new Bm25Index({ episodeGap: GAP });
    // One chat, two days: the helmet of the second day's sitting is the bicycle trip's.
    idx.add(1, 'I need a new helmet', 1, 101, 0);
    idx.add(2, 'the oven needs cleaning', 1, 102, 60_000);
    idx.add(3, 'I need a new helmet', 1, 201, 24 * HOUR);
    idx.add(4, 'the bicycle trip to the coast is in June', 1, 202, 24 * HOUR + 60_000);
    const q = idx.prepare('helmet for the bicycle trip');
    const weights = { parent: 1, neighbours: 0, group: 0.5 };
    const rank = (top: { key: number }[], key: number) => top.findIndex((m) => m.key === key);
    // As one chat (no sittings) the helmets tie, the first day's first.
    const plain = idx.searchTop(q, 1, 10, weights);
    expect(rank(plain, 1)).toBeLessThan(rank(plain, 3));
    const top = idx.searchTop(q, 1, 10, weights, [], idx.episodeMatches(q));
    expect(rank(top, 3)).toBeLessThan(rank(top, 1));
  });

  it('keeps sittings through removals and compaction, and forgets them on clear', () => {
    const idx = new Bm25Index({ episodeGap: GAP });
    for (let k = 1; k <= 200; k++) idx.add(k, `turn ${k} about rowing`, 1, k, k * HOUR);
    const before = idx.episodeOf(200);
    for (let k = 1; k <= 150; k++) idx.remove(k); // compacts on the way
    expect(idx.episodeOf(200)).toBe(before);
    expect(idx.episodeCount).toBe(50);
    // A turn right after the last one joins its sitting.
    idx.add(201, 'turn 201 about rowing', 1, 201, 200 * HOUR + 60_000);
    expect(idx.episodeOf(201)).toBe(before);
    idx.clear();
    idx.add(1, 'again', 1, 1, 0);
    expect(idx.episodeCount).toBe(1);
  });
});

describe('bestPerTurn', () => {
  it('keeps each turn’s best sentence, best first, within the limit', () => {
    const out = bestPerTurn([hit(1, 0.5), hit(1, 0.8), hit(2, 0.6), hit(3, 0.7)], {
      min: 0.3,
      limit: 2,
    });
    expect(out.map((h) => [h.turnId, h.match])).toEqual([
      [1, 0.8],
      [3, 0.7],
    ]);
  });

  it('floors on a sentence’s own match, not on what its chat adds', () => {
    const out = bestPerTurn([hit(1, 0.6, 0.2), hit(2, 0.4, 0.35)], { min: 0.3, limit: 5 });
    expect(out.map((h) => h.turnId)).toEqual([2]);
  });

  it('leaves out one chat’s turns from a message on', () => {
    const hits = [hit(5, 0.9, 0.9, 1), hit(4, 0.8, 0.8, 1), hit(6, 0.7, 0.7, 2)];
    const out = bestPerTurn(hits, {
      min: 0.3,
      limit: 5,
      exclude: { conversationId: 1, fromTurnId: 5 },
    });
    expect(out.map((h) => h.turnId)).toEqual([4, 6]);
  });

  it('does not count that chat’s earlier turns against the limit', () => {
    // Chat 1 dwells on the topic: its turns the prompt may hold lead, another chat's follows.
    const own = [9, 8, 7, 6].map((id, i) => hit(id, 0.9 - i * 0.05, 0.9 - i * 0.05, 1));
    const out = bestPerTurn([...own, hit(3, 0.5, 0.5, 2), hit(2, 0.4, 0.4, 2)], {
      min: 0.3,
      limit: 2,
      exclude: { conversationId: 1, fromTurnId: 10 },
    });
    // The other chat's two come whatever chat 1 holds; chat 1's at most as many again.
    expect(out.map((h) => h.turnId)).toEqual([9, 8, 3, 2]);
  });
});

describe('mergeRecall', () => {
  it('ranks entries and turns together, an entry first on a tie', () => {
    const out = mergeRecall([entry('A', 0.5), entry('B', 0.9)], [turn(1, 0.7), turn(2, 0.5)], 10);
    expect(out.map((h) => (h.kind === 'entry' ? h.path : h.turnId))).toEqual(['B', 1, 'A', 2]);
  });

  it('drops a turn an entry among the first carries, wherever the turn ranks', () => {
    const out = mergeRecall([entry('A', 0.5, [1])], [turn(1, 0.9), turn(2, 0.4)], 10);
    expect(out.map((h) => (h.kind === 'entry' ? h.path : h.turnId))).toEqual(['A', 2]);
  });

  it('stops at the limit', () => {
    expect(mergeRecall([entry('A', 0.5)], [turn(1, 0.9), turn(2, 0.8)], 2)).toHaveLength(2);
  });

  it('keeps entries and other chats’ turns within the limit however the chat’s own lead', () => {
    const exclude = { conversationId: 1, fromTurnId: 10 };
    const own = [turn(9, 0.95), turn(8, 0.9), turn(7, 0.85)];
    const out = mergeRecall([entry('A', 0.6)], [...own, turn(4, 0.5, 2)], 2, exclude);
    expect(out.map((h) => (h.kind === 'entry' ? h.path : h.turnId))).toEqual([9, 8, 'A', 4]);
  });
});

describe('excerpt', () => {
  it('gives a short message whole and a long one’s best sentence between ellipses', () => {
    expect(excerpt({ text: 'Short.', best: 'Short.' })).toBe('Short.');
    const long = `${'words '.repeat(200)}The cabin is in Norway.`;
    expect(excerpt({ text: long, best: 'The cabin is in Norway.' })).toBe(
      '…The cabin is in Norway.…',
    );
    expect(excerpt({ text: long, best: 'x'.repeat(2000) }).length).toBe(602);
  });
});

describe('savedFrom', () => {
  it('names the turns an entry was saved from: its snapshot’s two newest', () => {
    expect(savedFrom([{ turn_id: 4 }, { turn_id: 9 }, { turn_id: 9 }, { turn_id: 2 }])).toEqual([
      9, 4,
    ]);
    expect(savedFrom([])).toEqual([]);
  });
});

describe('recallOptions', () => {
  it('takes the floor, turns and exclude, and refuses what is not them', () => {
    expect(recallOptions(undefined)).toEqual({ min: 0.3, turnMin: 0.25, turns: true });
    expect(recallOptions({ turns: false, minRelevance: 0.5 })).toEqual({
      min: 0.5,
      turnMin: 0.5,
      turns: false,
    });
    expect(recallOptions({ exclude: { conversationId: 2, fromTurnId: 9 } })).toMatchObject({
      exclude: { conversationId: 2, fromTurnId: 9 },
    });
    for (const bad of [{ turns: 'yes' }, { exclude: { conversationId: 2 } }, { minRelevance: 2 }])
      expect(recallOptions(bad)).toMatchObject({ status: 'ERROR', code: 'INVALID_ARGUMENT' });
  });
});

describe('turnHit', () => {
  it('takes the message’s whole text and time, the sentence that matched and the chat title', () => {
    const h = turnHit(
      { row: row(7, 3, 'the best sentence'), match: 0.6, terms: ['best'] },
      'Whole text. the best sentence',
      new Date(5),
      new Map([[3, 'Title']]),
    );
    expect(h).toMatchObject({
      kind: 'turn',
      turnId: 7,
      conversationId: 3,
      text: 'Whole text. the best sentence',
      best: 'the best sentence',
      chat: 'Title',
      relevance: 0.6,
    });
    expect(h.time.getTime()).toBe(5);
  });
});

describe('the chat turn’s recall', () => {
  it('asks for entries and turns, leaving out the message answered and what follows it', () => {
    expect(recallRequest({ autoRecall: true }, 'where is Ana?', 4, 40)).toEqual({
      recall: {
        query: 'where is Ana?',
        limit: 12,
        options: { exclude: { conversationId: 4, fromTurnId: 40 } },
      },
    });
    expect(recallRequest({ autoRecall: false }, 'where is Ana?', 4, 40)).toEqual({});
  });

  it('keeps what the prompts took and stores it on a reply, read back safely', () => {
    const r = noneRecalled();
    expect(recalledMeta(r)).toEqual({});
    const time = new Date(Date.UTC(2026, 4, 3));
    noteRecalled(r, {
      recalled: ['Family/Ana'],
      recalledTurns: [{ conversationId: 2, turnId: 9, chat: 'News', time, said: 'Ana moves' }],
    });
    noteRecalled(r, { recalled: ['Family/Ana'], recalledTurns: [] });
    const meta = recalledMeta(r);
    expect(meta).toEqual({
      recalled: ['Family/Ana'],
      recalledTurns: [
        { conversationId: 2, turnId: 9, chat: 'News', time: time.toISOString(), said: 'Ana moves' },
      ],
    });
    expect(recalledTurnsOf(meta)).toEqual(meta.recalledTurns);
    // Words stored by hand or another device: one line, cut short.
    const long = recalledTurnsOf({
      recalledTurns: [{ conversationId: 2, turnId: 9, said: `One\n${'two '.repeat(40)}` }],
    });
    expect(long[0].said).toMatch(/^One two two .*two…$/);
    expect(long[0].said!.length).toBeLessThanOrEqual(61);
    expect(recalledTurnsOf({ recalledTurns: [{ turnId: 'x' }, null, 3] })).toEqual([]);
    expect(recalledTurnsOf(undefined)).toEqual([]);
  });
});

describe('a turn that asks', () => {
  it('is one with a question mark ending a sentence, not one in a link', () => {
    for (const t of [
      'Do you have any pets?',
      'Congratulations! How did it go? Tell me everything.',
      '"Is it far?" she asked.',
      'Where to next?!',
      '今天去哪里？',
      'Which one (the red?)',
      'How are you?🙂',
      '「どこに行く？」と聞いた',
      'Is it ready?…',
      'Why?, she wondered',
      'Vraiment ?',
    ])
      expect(asks(t), t).toBe(true);
    for (const t of [
      'I have two cats.',
      'See https://example.com/search?q=cats for more.',
      'The file is notes?draft.txt',
      'Use x ? y : z here.',
      '',
    ])
      expect(asks(t), t).toBe(false);
  });
});
