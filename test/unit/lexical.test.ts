// The word index: tokenisation (case, punctuation, possessives, numbers, stemming, accents, CJK)
// and BM25 scoring kept exact through adds, replacements and removals (against a brute force).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Bm25Index, BM25_B, BM25_K1, inParent } from '../../src/memory/lexical/bm25-index';
import { queryTerms, tokenize } from '../../src/memory/lexical/tokenize';
import { packWords } from '../../src/memory/shards';

describe('tokenize', () => {
  it('folds case, punctuation, possessives, plurals and accents onto one term', () => {
    expect(tokenize("Caroline's CAFÉ, cafés!")).toEqual(['carolin', 'cafe', 'cafe']);
    expect(tokenize('Running runners run.')).toEqual(['run', 'runner', 'run']);
    expect(tokenize('“Don’t” — it’s THE end')).toEqual(['end']);
  });

  it('takes irregular forms back to their word, so a question meets the line that answers it', () => {
    expect(tokenize('When did Caroline go to the support group?')).toEqual(
      expect.arrayContaining(tokenize('I went to a support group yesterday').slice(0, 1)),
    );
    for (const [asked, said] of [
      ['go', 'went'],
      ['buy', 'bought'],
      ['teach', 'taught'],
      ['write', 'written'],
      ['child', 'children'],
      ['meet', 'met'],
    ]) {
      expect(tokenize(said)).toEqual(tokenize(asked));
    }
    // A form that is as often another word keeps its own term.
    expect(tokenize('left')).not.toEqual(tokenize('leave'));
    expect(tokenize('rose')).not.toEqual(tokenize('rise'));
  });

  it('keeps numbers whole', () => {
    expect(tokenize('1,000 people on 8 May 2023 paid 3.50')).toEqual([
      '1000',
      'peopl',
      '8',
      'may',
      '2023',
      'pay',
      '3.50',
    ]);
  });

  it('splits CJK runs into overlapping pairs and keeps other scripts as words', () => {
    expect(tokenize('我们去北京')).toEqual(['我们', '们去', '去北', '北京']);
    expect(tokenize('東京タワー tower')).toContain('tower');
    expect(tokenize('Привет мир')).toEqual(['привет', 'мир']);
    expect(tokenize('नमस्ते दुनिया')).toEqual(['नमस्ते', 'दुनिया']);
  });

  it('gives nothing for stop words, emoji and empty text, and caps huge input', () => {
    expect(tokenize('the of and it is')).toEqual([]);
    expect(tokenize('🙂🎉')).toEqual([]);
    expect(tokenize('')).toEqual([]);
    expect(tokenize('word '.repeat(100_000)).length).toBeLessThanOrEqual(20_000 / 5 + 1);
    expect(queryTerms('cat cats CAT')).toEqual(['cat']);
  });
});

/** BM25 as the textbook writes it, over every document. */
function bruteForce(docs: Map<number, string[]>, query: string[]) {
  const n = docs.size;
  const avg = [...docs.values()].reduce((s, d) => s + d.length, 0) / n || 1;
  const out = new Map<number, number>();
  for (const [key, terms] of docs) {
    let score = 0;
    for (const t of new Set(query)) {
      const df = [...docs.values()].filter((d) => d.includes(t)).length;
      const tf = terms.filter((x) => x === t).length;
      if (!tf) continue;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score +=
        (idf * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * terms.length) / avg));
    }
    if (score > 0) out.set(key, score);
  }
  return out;
}

describe('Bm25Index', () => {
  it('scores exactly like BM25 through adds, replacements and removals', () => {
    const vocab = ['cat', 'dog', 'fish', 'bird', 'cow', 'pig', 'ant']; // their own index form
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('add' as const),
        key: fc.integer({ min: 1, max: 40 }),
        terms: fc.array(fc.constantFrom(...vocab), { minLength: 1, maxLength: 8 }),
      }),
      fc.record({ kind: fc.constant('remove' as const), key: fc.integer({ min: 1, max: 40 }) }),
    );
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 200 }),
        fc.subarray(vocab, { minLength: 1 }),
        (ops, q) => {
          const idx = new Bm25Index();
          const docs = new Map<number, string[]>();
          for (const o of ops) {
            if (o.kind === 'add') {
              idx.addTerms(o.key, o.terms);
              docs.set(o.key, o.terms);
            } else {
              idx.remove(o.key);
              docs.delete(o.key);
            }
          }
          expect(idx.size).toBe(docs.size);
          const want = bruteForce(docs, q);
          const prepared = idx.prepare(q.join(' '));
          // Document frequencies count removed documents until compaction; compare rankings of
          // documents that match, and every score within a tolerance when nothing was removed.
          const got = new Map(idx.search(prepared).map((m) => [m.key, m]));
          expect(new Set(got.keys())).toEqual(new Set(want.keys()));
          for (const m of got.values()) {
            expect(m.relevance).toBeGreaterThan(0);
            expect(m.relevance).toBeLessThanOrEqual(1);
          }
          const keys = ops.map((o) => o.key);
          if (ops.every((o) => o.kind === 'add') && new Set(keys).size === keys.length) {
            for (const [k, s] of want) expect(got.get(k)!.score).toBeCloseTo(s, 4);
          }
        },
      ),
      { numRuns: 200, seed: 9 },
    );
  });

  it("names a group's newest documents up to a parent, whatever order they were added in", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 120 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 40 }),
        fc.boolean(),
        (drawn, removals, limit, upTo, inOrder) => {
          // In id order, as chunks arrive (the scan stops early), or in any order.
          const keys = inOrder ? [...drawn].sort((a, b) => a - b) : drawn;
          const idx = new Bm25Index();
          const groupOf = (k: number) => k % 3;
          const parentOf = (k: number) => Math.floor(k / 10);
          for (const k of keys) idx.add(k, `word${k % 7}`, groupOf(k), parentOf(k));
          const gone = new Set(removals.map((r) => keys[r % keys.length]));
          for (const k of gone) idx.remove(k);
          for (const group of [0, 1, 2, 5]) {
            const live = keys.filter((k) => !gone.has(k) && groupOf(k) === group);
            const newest = (max: number) =>
              live
                .filter((k) => parentOf(k) <= max)
                .sort((a, b) => b - a)
                .slice(0, limit);
            expect(idx.newestKeys(group, limit)).toEqual(newest(Infinity));
            expect(idx.newestKeys(group, limit, upTo)).toEqual(newest(upTo));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('searches within a group and reports each term a document matched', () => {
    const idx = new Bm25Index();
    idx.add(1, 'red apples and green pears', 7);
    idx.add(2, 'red apples', 8);
    const q = idx.prepare('apple pear');
    const inSeven = idx.search(q, 7);
    expect(inSeven.map((m) => m.key)).toEqual([1]);
    expect(inSeven[0].mask).toBe(0b11);
    expect(idx.search(q, 8)[0].mask).toBe(0b01);
    expect(idx.search(idx.prepare('banana'))).toEqual([]);
  });

  it('says how much of a query some document holds, a missing word weighing as the rarest', () => {
    const idx = new Bm25Index();
    idx.add(1, 'red apples and green pears', 7);
    idx.add(2, 'red apples', 8);
    idx.add(3, 'a bowl of soup', 8);
    expect(idx.prepare('apple pear').coverage).toBe(1);
    const q = idx.prepare('pear banana');
    // Held: "pear" (in one document of three); missing: "banana", weighed as in none.
    const held = Math.log(1 + (3 - 1 + 0.5) / 1.5);
    const missing = Math.log(1 + 3.5 / 0.5);
    expect(q.coverage).toBeCloseTo(held / (held + missing), 12);
    // The match itself is still against the words held: as if "pear" were asked alone.
    expect(idx.search(q)[0].relevance).toBe(idx.search(idx.prepare('pear'))[0].relevance);
    expect(idx.prepare('banana').coverage).toBe(0);
    expect(new Bm25Index().prepare('banana').coverage).toBe(1);
  });

  it('loads packed terms (as the shards store them) into the same index as the texts', () => {
    const texts = [
      "Caroline's café opened in May 2023",
      'the café was full, the cafés were full',
      '',
      'We went hiking near the lake',
      'Melanie paints sunsets by the lake',
    ];
    const fromTexts = new Bm25Index();
    texts.forEach((t, i) => fromTexts.add(i + 1, t, 5, 100 + (i >> 1)));
    const packed = new Bm25Index();
    packed.addPacked(
      texts.map((_, i) => i + 1),
      texts.map(() => 5),
      texts.map((_, i) => 100 + (i >> 1)),
      packWords(texts.map((t) => tokenize(t))),
    );
    expect(packed.size).toBe(fromTexts.size);
    for (const query of ['cafe full', 'lake sunsets', 'May 2023 hiking', 'nothing here']) {
      const a = fromTexts.search(fromTexts.prepare(query), 5);
      const b = packed.search(packed.prepare(query), 5);
      expect(b).toEqual(a);
    }
  });

  it('loads many packed batches at once (a cold start) into the same index as one by one', () => {
    const words = ['cat', 'dog', 'fish', 'bird', 'cow', 'yak'];
    const doc = fc.record({
      key: fc.integer({ min: 1, max: 40 }),
      terms: fc.array(fc.constantFrom(...words), { maxLength: 6 }),
      group: fc.integer({ min: 1, max: 3 }),
    });
    fc.assert(
      fc.property(
        fc.array(fc.array(doc, { maxLength: 12 }), { maxLength: 5 }),
        // Documents the index holds before (a later load into a live index).
        fc.array(doc, { maxLength: 6 }),
        // Keys renumbered to rise through the batches, as a cold start's shards do.
        fc.boolean(),
        (batchesIn, before, rising) => {
          let next = 100;
          // Each batch's keys ascending, as a shard's ids are.
          const batches = (
            rising ? batchesIn.map((docs) => docs.map((d) => ({ ...d, key: next++ }))) : batchesIn
          ).map((docs) => [...docs].sort((a, b) => a.key - b.key));
          // A turn's sentences side by side: three keys share a parent.
          const parentOf = (key: number) => Math.ceil(key / 3) * 10;
          const packed = batches.map((docs) => ({
            keys: docs.map((d) => d.key),
            groups: docs.map((d) => d.group),
            parents: docs.map((d) => parentOf(d.key)),
            packed: packWords(docs.map((d) => d.terms)),
          }));
          const held = (i: Bm25Index) => {
            for (const d of before) i.addTerms(d.key, d.terms, d.group, parentOf(d.key));
            return i;
          };
          // The same documents one at a time: in the order of their keys where every key is new
          // (a cold start's shards: the batches may interleave), else batch by batch.
          const all = batches.flat();
          const fresh =
            new Set([...all, ...before].map((d) => d.key)).size === all.length + before.length &&
            batches.every((docs) => docs.every((d, i) => i === 0 || docs[i - 1].key < d.key));
          const one = held(new Bm25Index());
          if (fresh)
            for (const d of [...all].sort((a, b) => a.key - b.key))
              one.addTerms(d.key, d.terms, d.group, parentOf(d.key));
          else for (const b of packed) one.addPacked(b.keys, b.groups, b.parents, b.packed);
          const many = held(new Bm25Index());
          many.addPackedMany(packed);
          expect(many.size).toBe(one.size);
          expect(many.episodeCount).toBe(one.episodeCount);
          for (const q of ['cat dog', 'fish', 'bird cow yak']) {
            const sorted = (i: Bm25Index) =>
              i.search(i.prepare(q), null).sort((a, b) => a.key - b.key);
            expect(sorted(many)).toEqual(sorted(one));
            expect(
              many.searchTop(many.prepare(q), null, 5, { parent: 1, neighbours: 0.5, after: true }),
            ).toEqual(
              one.searchTop(one.prepare(q), null, 5, { parent: 1, neighbours: 0.5, after: true }),
            );
          }
          // Both take later documents alike (a term grown out of the shared buffer).
          for (const i of [one, many]) i.addTerms(999, ['cat', 'cat', 'yak'], 1, 9990);
          expect(many.search(many.prepare('cat yak'), null)).toEqual(
            one.search(one.prepare('cat yak'), null),
          );
          // And compact alike: enough documents removed to renumber every term's postings,
          // those in the shared buffer in place.
          for (const i of [one, many]) {
            for (let k = 0; k < 80; k++) i.addTerms(2000 + k, ['cow', 'dog'], 2, 20_000 + k);
            for (let k = 0; k < 80; k++) i.remove(2000 + k);
            i.remove(batches[0]?.[0]?.key ?? 999);
          }
          for (const q of ['cat dog', 'fish yak', 'bird cow']) {
            const sorted = (i: Bm25Index) =>
              i.search(i.prepare(q), null).sort((a, b) => a.key - b.key);
            expect(sorted(many)).toEqual(sorted(one));
          }
        },
      ),
    );
  });

  it('selects the best documents by their words with their turn as context, as a full sort would', () => {
    const words = ['cat', 'dog', 'fish', 'bird', 'cow'];
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            terms: fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 5 }),
            turn: fc.integer({ min: 1, max: 6 }),
            group: fc.integer({ min: 1, max: 2 }),
          }),
          { minLength: 1, maxLength: 60 },
        ),
        fc.subarray(words, { minLength: 1 }),
        fc.integer({ min: 1, max: 10 }),
        fc.constantFrom(null, 1),
        (docs, q, m, group) => {
          const idx = new Bm25Index();
          docs.forEach((d, i) => idx.addTerms(i + 1, d.terms, d.group, d.turn));
          const query = idx.prepare(q.join(' '));
          const all = idx.search(query, group);
          const turns = idx.parentRelevance(query, all);
          const full = all
            .map((w) => inParent(w.relevance, turns.get(w.parent) ?? 0, 1))
            .sort((a, b) => b - a)
            .slice(0, m);
          const top = idx.searchTop(query, group, m, { parent: 1, neighbours: 0 });
          expect(top.length).toBe(full.length);
          top.forEach((w, i) => {
            expect(w.context).toBeCloseTo(turns.get(w.parent) ?? 0, 5);
            expect(inParent(w.relevance, w.context!, 1)).toBeCloseTo(full[i], 5);
          });
          // A candidate of the other signal that matches gets its words' relevance too.
          const last = all[all.length - 1];
          if (last && !top.some((w) => w.key === last.key)) {
            const extra = idx.searchTop(query, group, m, { parent: 1, neighbours: 0 }, [last.key]);
            expect(extra.at(-1)?.key).toBe(last.key);
          }
        },
      ),
      { numRuns: 200, seed: 11 },
    );
  });

  it('counts a turn’s words once, however its sentences split them', () => {
    const idx = new Bm25Index();
    const w = { parent: 1, neighbours: 0.5, after: true };
    // Turn 10 holds "lake" and "sunset" in two sentences; turn 20 holds both in one sentence.
    // Around turn 30 (which holds "lake"), the turn after holds "sunset".
    idx.add(1, 'we walked to the lake', 1, 10);
    idx.add(2, 'the sunset was red', 1, 10);
    idx.add(3, 'the lake at sunset', 2, 20);
    idx.add(4, 'we walked to the lake', 3, 30);
    idx.add(5, 'the sunset was red', 3, 31);
    // Turn 40 holds "lake" alone.
    idx.add(6, 'we walked to the lake', 4, 40);
    const q = idx.prepare('lake sunset');
    const share = (term: string) => q.idf[q.terms.indexOf(term)] / q.total;
    const top = idx.searchTop(q, null, 10, w);
    const full = (key: number) => {
      const m = top.find((x) => x.key === key)!;
      return inParent(m.relevance, m.context!, w.parent);
    };
    // A turn that holds every word is a full match, split across sentences or not.
    expect(full(1)).toBeCloseTo(1, 6);
    expect(full(1)).toBeCloseTo(full(3), 6);
    // A turn holding one of the words matches by that word's share, not more: its sentence's
    // words are not counted a second time as its turn's.
    expect(full(6)).toBeCloseTo(share('lake'), 6);
    // A word only the turn after holds counts at the neighbours' weight, not as the turn's own.
    expect(full(4)).toBeCloseTo(share('lake') + w.neighbours * share('sunset'), 6);
  });

  it('counts the words of the turns around a sentence below its own, within its conversation', () => {
    const idx = new Bm25Index();
    const w = { parent: 1, neighbours: 0.35, after: true };
    // Conversation 1: a sentence about the sunset; the reply names the painting.
    idx.add(1, 'I painted the sunset', 1, 10);
    idx.add(2, 'that painting of the lake is lovely', 1, 11);
    // Conversation 1, later: a sentence holding both words itself.
    idx.add(3, 'a lake at sunset, my favourite view', 1, 12);
    // Conversation 2: the same first sentence with nothing around it.
    idx.add(4, 'I painted the sunset', 2, 20);
    idx.add(5, 'filler about the weather', 2, 21);
    const q = idx.prepare('sunset lake');
    const top = idx.searchTop(q, null, 5, w);
    const rank = (key: number) => top.findIndex((m) => m.key === key);
    const full = (key: number) => {
      const m = top.find((x) => x.key === key)!;
      return inParent(m.relevance, m.context!, 1);
    };
    expect(rank(3)).toBe(0); // its own words first
    expect(full(1)).toBeGreaterThan(full(4)); // the reply's word helps, below its own
    expect(full(1)).toBeLessThan(full(3));
    // Without neighbours, the two first sentences tie.
    const plain = idx.searchTop(q, null, 5, { parent: 1, neighbours: 0 });
    const p1 = plain.find((m) => m.key === 1)!;
    const p4 = plain.find((m) => m.key === 4)!;
    expect(inParent(p1.relevance, p1.context!, 1)).toBeCloseTo(
      inParent(p4.relevance, p4.context!, 1),
      6,
    );
  });
  it('links a chat’s turns in the order said, whatever order they are added in', () => {
    const idx = new Bm25Index();
    const w = { parent: 1, neighbours: 0.5, after: true };
    // Turns 12 and 10 of chat 1 come before turn 11 (pieces read out of order); chat 2 between.
    idx.add(3, 'see you at the lake', 1, 12);
    idx.add(1, 'I painted the sunset', 1, 10);
    idx.add(9, 'a sunset over the lake', 2, 50);
    idx.add(2, 'that view is lovely', 1, 11);
    expect(idx.nextParent(10)).toEqual({ parent: 11, key: 2 });
    expect(idx.nextParent(11)).toEqual({ parent: 12, key: 3 });
    expect(idx.nextParent(12)).toBeUndefined();
    expect(idx.nextParent(50)).toBeUndefined();
    expect(idx.nextParent(99)).toBeUndefined();
    // A turn said next links after the chat's last.
    idx.add(4, 'bring the paints', 1, 13);
    expect(idx.nextParent(12)).toEqual({ parent: 13, key: 4 });
    // Turn 11's neighbours are 10 and 12: "sunset" and "lake" count at the neighbours' weight.
    const q = idx.prepare('view sunset lake');
    const share = (term: string) => q.idf[q.terms.indexOf(term)] / q.total;
    const m = idx.searchTop(q, null, 10, w).find((x) => x.key === 2)!;
    expect(m.context).toBeCloseTo(
      share('view') + w.neighbours * (share('sunset') + share('lake')),
      6,
    );
    // A turn whose sentences are gone is passed over; one whose first sentence is gone still
    // counts by another.
    idx.remove(3);
    expect(idx.nextParent(11)).toEqual({ parent: 13, key: 4 });
    idx.add(5, 'and the brushes', 1, 13);
    idx.remove(4);
    expect(idx.nextParent(11)).toEqual({ parent: 13, key: 5 });
    idx.remove(5);
    expect(idx.nextParent(11)).toBeUndefined();
    // A whole chat added backwards (far more than a few steps out of place each).
    const back = new Bm25Index();
    for (let t = 40; t >= 1; t--) back.add(t, `line ${t}`, 7, 100 + t);
    back.add(41, 'line 41', 7, 141);
    for (let t = 1; t <= 40; t++)
      expect(back.nextParent(100 + t)).toEqual({ parent: 101 + t, key: t + 1 });
    expect(back.nextParent(141)).toBeUndefined();
  });
});
