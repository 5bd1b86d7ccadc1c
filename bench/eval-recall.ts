// `npm run eval:recall [path]`: evidence recall of every search the engine offers, measured on
// LoCoMo conversations (Maharana et al., ACL 2024; CC BY-NC 4.0, read in place from
// ../shared/data/locomo-dev.json, never copied into the project).
//
// Only the public engine API, the app's flow: each turn recorded (recordTurn, one conversation per
// LoCoMo sample) and then saved as an entry at `Conversation/D1_3` with the clock at the turn's
// session date; every question asked a day after the last session. A second store holds the same
// entries saved with no conversation behind them (saveMemory only), a third the same one level
// deeper. Two more take each session as its own chat, as a person chats: the app flow again
// (turns recorded, entries saved), and the episodic setup (turns recorded, nothing saved: what
// auto-recall finds when the model never saves). The reference is plain BM25 over the same turn
// texts (MiniSearch defaults, English stop words, OR), and the original reference over
// the bare turn texts (no speaker name).
//
// Writes bench/results-recall.json and prints the table that bench/README.md carries.
import 'fake-indexeddb/auto';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import MiniSearch from 'minisearch';
import {
  DEFAULT_DATA,
  normaliseEvidence,
  readSamples,
  sessionsOf,
  turnText,
  type Sample,
} from './core/locomo';
import { BUNDLED_MODEL, createEmbedder, openMemory } from '../src/memory';
import type { HeadingResult, MemoryApi } from '../src/memory/types';
import { ENGLISH_STOP_WORDS } from '../src/memory/lexical/stop-words';

const here = dirname(fileURLToPath(import.meta.url));
const DAY = 86_400_000;
const HEADING = 'Conversation';

const entryPath = (diaId: string) => `${HEADING}/${diaId.replace(':', '_')}`;
const diaOf = (path: string) => {
  const m = /(D\d+)_(\d+)$/.exec(path);
  return m ? `${m[1]}:${m[2]}` : '';
};

type Ranker = (question: string) => Promise<string[]>;

const METHODS = [
  'default',
  'bias0',
  'recall',
  'recallEntries',
  'recallSessions',
  'recallSessionsEntries',
  'chunks',
  'episodic',
  'episodicChunks',
  'episodicLexical',
  'episodicSemantic',
  'entriesOnly',
  'entriesOnlyDefault',
  'deepSubtree',
  'deepChildren',
  'lexical',
  'semantic',
  'bm25',
  'bm25Bare',
] as const;
type Method = (typeof METHODS)[number];

const LABELS: Record<Method, string> = {
  default: 'queryMemoryHeading, default recencyBias 0.3',
  bias0: 'queryMemoryHeading, recencyBias 0',
  recall: 'recallMemory (auto-recall: entries and turns), limit 10, distinct turns',
  recallEntries: 'recallMemory, entries alone (turns: false), limit 10',
  recallSessions:
    'the app flow with each session its own chat (turns recorded, entries saved): recallMemory, limit 10, distinct turns',
  recallSessionsEntries: 'the same, entries alone (turns: false): the recall before past turns',
  chunks: 'searchChunks (whole conversation), top 10 turns',
  episodic:
    'episodic: each session its own chat, no entries; recallMemory (auto-recall) turn hits, limit 10',
  episodicChunks: 'episodic: searchChunks(null) over every chat, first 10 distinct turns',
  episodicLexical: 'episodic: the same, lexical signal only',
  episodicSemantic: 'episodic: the same, semantic signal only',
  entriesOnly: 'entries alone (saveMemory only), recencyBias 0',
  entriesOnlyDefault: 'entries alone (saveMemory only), default recencyBias 0.3',
  deepSubtree:
    'entries alone one level deeper (Conversation/S1/D1_3), recencyBias 0, scope subtree (default)',
  deepChildren: 'the same deeper tree, scope children (each session heading by its best entry)',
  lexical: 'queryMemoryHeading, recencyBias 0, lexical signal only',
  semantic: 'queryMemoryHeading, recencyBias 0, semantic signal only',
  bm25: 'reference: plain BM25 (MiniSearch defaults, English stop words, OR), same turn texts',
  bm25Bare: 'reference: the same BM25 over the bare turn texts (no speaker, no photo caption)',
};

function headingPaths(r: HeadingResult | { status: string }): string[] {
  if (r.status !== 'SUCCESS') return [];
  return (r as HeadingResult).children.map((c) =>
    'isHeading' in c && c.isHeading ? (c.bestMatch?.path ?? c.path) : c.path,
  );
}

function bm25Ranker(docs: { id: string; text: string }[]): Ranker {
  const ms = new MiniSearch<{ id: string; text: string }>({
    fields: ['text'],
    processTerm: (t) => {
      const w = t.toLowerCase();
      return ENGLISH_STOP_WORDS.has(w) ? null : w;
    },
    searchOptions: { combineWith: 'OR' },
  });
  ms.addAll(docs);
  return async (q) => ms.search(q).map((r) => String(r.id));
}

interface Scores {
  questions: number;
  r5: number;
  r10: number;
}

async function main() {
  const arg = process.argv.slice(2).find((a) => !a.startsWith('--'));
  const quick = process.argv.includes('--quick');
  const file = resolve(arg ?? DEFAULT_DATA);
  if (!existsSync(file)) {
    console.error(
      `eval:recall: no data at ${file}.\n` +
        'It reads the LoCoMo dev conversations from ../shared/data/locomo-dev.json (beside the ' +
        'project) or from a file of the same shape named on the command line: ' +
        '`npm run eval:recall -- path/to/locomo.json`.',
    );
    process.exit(2);
  }
  let samples: Sample[];
  try {
    samples = readSamples(file);
  } catch (e) {
    console.error(`eval:recall: ${file} could not be read: ${(e as Error).message}`);
    process.exit(2);
  }
  if (quick) samples = samples.slice(0, 1);
  const only = process.argv
    .find((a) => a.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',');
  const dumpPath = process.argv.find((a) => a.startsWith('--dump='))?.slice('--dump='.length);
  const dump: unknown[] | null = dumpPath ? [] : null;

  const embedder = createEmbedder({ model: BUNDLED_MODEL });
  const info = await embedder.ready();
  const per: Record<Method, Record<string, Scores>> = Object.fromEntries(
    METHODS.map((m) => [m, {}]),
  ) as Record<Method, Record<string, Scores>>;
  const add = (m: Method, cat: string, r5: number, r10: number) => {
    for (const key of [cat, 'all']) {
      const s = (per[m][key] ??= { questions: 0, r5: 0, r10: 0 });
      s.questions++;
      s.r5 += r5;
      s.r10 += r10;
    }
  };
  let turnsTotal = 0;
  let ingestMs = 0;
  const queryMs: number[] = [];

  for (const sample of samples) {
    const sessions = sessionsOf(sample);
    const known = new Set(sessions.flatMap((s) => s.turns.map((t) => t.dia_id)));
    let t = 0;
    const clock = () => t;
    const name = `eval-${sample.sample_id}-${Date.now()}`;
    const mem = openMemory({ name, embedder, now: clock });
    const bare = openMemory({ name: `${name}-bare`, embedder, now: clock });
    const deep = openMemory({ name: `${name}-deep`, embedder, now: clock });
    const wantDeep = !only || only.some((m) => m.startsWith('deep'));
    const wantApp =
      !only ||
      only.some(
        (m) => !m.startsWith('episodic') && !m.startsWith('bm25') && m !== 'recallSessions',
      );
    const wantEpisodic = !only || only.some((m) => m.startsWith('episodic'));
    // The episodic setup: each session its own chat, turns recorded, nothing saved.
    const epi = openMemory({ name: `${name}-episodic`, embedder, now: clock });
    // The app flow as a person chats, a chat a session: turns recorded, entries saved.
    const wantSessions = !only || only.some((m) => m.startsWith('recallSessions'));
    const ses = openMemory({ name: `${name}-sessions`, embedder, now: clock });
    const sesDia = new Map<number, string>();
    const conv = await mem.createConversation(`LoCoMo ${sample.sample_id}`);
    if (conv.status !== 'SUCCESS') throw new Error(conv.message);
    const turnDia = new Map<number, string>();
    const epiDia = new Map<number, string>();
    const t0 = performance.now();
    for (const s of sessions) {
      t = s.date;
      const chat = wantEpisodic ? await epi.createConversation(`Session ${s.index}`) : undefined;
      if (chat && chat.status !== 'SUCCESS') throw new Error(chat.message);
      const sesChat = wantSessions ? await ses.createConversation(`Session ${s.index}`) : undefined;
      if (sesChat && sesChat.status !== 'SUCCESS') throw new Error(sesChat.message);
      for (const turn of s.turns) {
        t += 30_000; // half a minute a turn
        const text = turnText(turn);
        const role = turn.speaker === sample.conversation.speaker_a ? 'user' : 'assistant';
        if (chat) {
          const r = await epi.recordTurn({ conversationId: chat.id, role, text });
          if (r.status !== 'SUCCESS') throw new Error(`recordTurn: ${r.message}`);
          epiDia.set(r.turnId, turn.dia_id);
        }
        if (sesChat) {
          const r = await ses.recordTurn({ conversationId: sesChat.id, role, text });
          if (r.status !== 'SUCCESS') throw new Error(`recordTurn: ${r.message}`);
          sesDia.set(r.turnId, turn.dia_id);
          const saved = await ses.saveMemory(entryPath(turn.dia_id), text);
          if (saved.status !== 'SUCCESS') throw new Error(`saveMemory: ${saved.message}`);
        }
        if (!wantApp) {
          turnsTotal++;
          continue;
        }
        const rec = await mem.recordTurn({ conversationId: conv.id, role, text });
        if (rec.status !== 'SUCCESS') throw new Error(`recordTurn: ${rec.message}`);
        turnDia.set(rec.turnId, turn.dia_id);
        if (
          only &&
          !only.some((m) => m !== 'chunks' && !m.startsWith('bm25') && !m.startsWith('episodic'))
        ) {
          turnsTotal++;
          continue; // only chunk and reference searches asked for: no entries needed
        }
        const saved = await mem.saveMemory(entryPath(turn.dia_id), text);
        if (saved.status !== 'SUCCESS') throw new Error(`saveMemory: ${saved.message}`);
        const plain = await bare.saveMemory(entryPath(turn.dia_id), text, 0);
        if (plain.status !== 'SUCCESS') throw new Error(`saveMemory: ${plain.message}`);
        if (wantDeep) {
          const deeper = entryPath(turn.dia_id).replace('/', `/S${s.index}/`);
          const d = await deep.saveMemory(deeper, text, 0);
          if (d.status !== 'SUCCESS') throw new Error(`saveMemory: ${d.message}`);
        }
        turnsTotal++;
      }
    }
    ingestMs += performance.now() - t0;
    t = sessions[sessions.length - 1].date + DAY;

    const docs = sessions.flatMap((s) => s.turns.map((x) => ({ id: x.dia_id, text: turnText(x) })));
    const bareDocs = sessions.flatMap((s) => s.turns.map((x) => ({ id: x.dia_id, text: x.text })));
    const heading =
      (m: MemoryApi, bias?: number, signals?: string): Ranker =>
      async (q) =>
        headingPaths(
          await m.queryMemoryHeading(HEADING, q, bias, { limit: 10, signals } as never),
        ).map(diaOf);
    const episodicChunks =
      (signals?: 'lexical' | 'semantic'): Ranker =>
      async (q) => {
        const hits = await epi.searchChunks(null, q, 100, { signals });
        const out: string[] = [];
        for (const h of hits) {
          const d = epiDia.get(h.chunk.turnId);
          if (d && !out.includes(d)) out.push(d);
        }
        return out;
      };
    const rankers: Record<Method, Ranker> = {
      default: heading(mem),
      bias0: heading(mem, 0),
      recall: async (q) => {
        const r = await mem.recallMemory(q, 10);
        if (!Array.isArray(r)) return [];
        const ids = r.map((h) => (h.kind === 'entry' ? diaOf(h.path) : turnDia.get(h.turnId)));
        return [...new Set(ids.filter((d): d is string => !!d))];
      },
      recallSessions: async (q) => {
        const r = await ses.recallMemory(q, 10);
        if (!Array.isArray(r)) return [];
        const ids = r.map((h) => (h.kind === 'entry' ? diaOf(h.path) : sesDia.get(h.turnId)));
        return [...new Set(ids.filter((d): d is string => !!d))];
      },
      recallSessionsEntries: async (q) => {
        const r = await ses.recallMemory(q, 10, { turns: false });
        return Array.isArray(r)
          ? r.flatMap((h) => (h.kind === 'entry' ? [diaOf(h.path)] : []))
          : [];
      },
      recallEntries: async (q) => {
        const r = await mem.recallMemory(q, 10, { turns: false });
        return Array.isArray(r)
          ? r.flatMap((h) => (h.kind === 'entry' ? [diaOf(h.path)] : []))
          : [];
      },
      episodic: async (q) => {
        const r = await epi.recallMemory(q, 10);
        if (!Array.isArray(r)) return [];
        return r.flatMap((h) =>
          h.kind === 'turn' && epiDia.has(h.turnId) ? [epiDia.get(h.turnId)!] : [],
        );
      },
      episodicChunks: episodicChunks(),
      episodicLexical: episodicChunks('lexical'),
      episodicSemantic: episodicChunks('semantic'),
      chunks: async (q) => {
        const hits = await mem.searchChunks(conv.id, q, 100);
        const out: string[] = [];
        for (const h of hits) {
          const d = turnDia.get(h.chunk.turnId);
          if (d && !out.includes(d)) out.push(d);
        }
        return out;
      },
      entriesOnly: heading(bare, 0),
      entriesOnlyDefault: heading(bare),
      deepSubtree: heading(deep, 0),
      deepChildren: async (q) =>
        headingPaths(
          await deep.queryMemoryHeading(HEADING, q, 0, { limit: 10, scope: 'children' }),
        ).map(diaOf),
      lexical: heading(mem, 0, 'lexical'),
      semantic: heading(mem, 0, 'semantic'),
      bm25: bm25Ranker(docs),
      bm25Bare: bm25Ranker(bareDocs),
    };

    for (const qa of sample.qa) {
      if (qa.category === 5) continue;
      const evidence = normaliseEvidence(qa.evidence ?? [], known);
      if (!evidence.length) continue;
      if (dump) {
        // Every scored entry's signals, to study the fusion offline (not written by default).
        for (const [label, m] of [
          ['flow', mem],
          ['bare', bare],
        ] as const) {
          const r = await m.queryMemoryHeading(HEADING, qa.question, 0, { limit: 1000 });
          if (r.status !== 'SUCCESS') continue;
          dump.push({
            store: label,
            sample: sample.sample_id,
            category: qa.category,
            evidence,
            hits: r.children.map((c) => [
              diaOf(c.path),
              c.why?.lexical ?? 0,
              c.why?.semantic ?? 0,
              c.recency ?? 0,
            ]),
          });
        }
      }
      for (const m of METHODS) {
        if (only && !only.includes(m)) continue;
        const q0 = performance.now();
        const ranked = await rankers[m](qa.question);
        if (m === 'default') queryMs.push(performance.now() - q0);
        const hit = (k: number) =>
          evidence.filter((e) => ranked.slice(0, k).includes(e)).length / evidence.length;
        add(m, String(qa.category), hit(5), hit(10));
      }
    }
    await mem.close();
    await epi.close();
    await ses.close();
    await bare.close();
    await deep.close();
    console.error(`${sample.sample_id}: done`);
  }

  const cats = ['1', '2', '3', '4', 'all'];
  const table = METHODS.filter((m) => per[m].all).map((m) => {
    const row: Record<string, { r5: number; r10: number; questions: number }> = {};
    for (const c of cats) {
      const s = per[m][c];
      if (s)
        row[c] = {
          questions: s.questions,
          r5: round(s.r5 / s.questions),
          r10: round(s.r10 / s.questions),
        };
    }
    return { method: m, label: LABELS[m], ...row };
  });
  queryMs.sort((a, b) => a - b);
  const result = {
    data: file.endsWith('locomo-dev.json') ? 'LoCoMo dev half (conv-26, 30, 41, 42, 43)' : file,
    credit: 'LoCoMo, Maharana et al., ACL 2024, CC BY-NC 4.0',
    model: info.id,
    conversations: samples.length,
    turns: turnsTotal,
    ingest_ms_per_turn: round(ingestMs / turnsTotal),
    query_ms_p50: round(queryMs[Math.floor(queryMs.length / 2)] ?? 0),
    query_ms_p95: round(queryMs[Math.floor(queryMs.length * 0.95)] ?? 0),
    methods: table,
  };
  const header = '| search | cat 1 R@5 / R@10 | cat 2 | cat 3 | cat 4 | all R@5 | all R@10 |';
  const lines = [header, '|---|---|---|---|---|---|---|'];
  for (const r of table) {
    const cell = (c: string) => {
      const s = (r as unknown as Record<string, { r5: number; r10: number } | undefined>)[c];
      return s ? `${s.r5.toFixed(2)} / ${s.r10.toFixed(2)}` : '–';
    };
    const all = (r as unknown as Record<string, { r5: number; r10: number }>).all;
    lines.push(
      `| ${r.label} | ${cell('1')} | ${cell('2')} | ${cell('3')} | ${cell('4')} | ${all.r5.toFixed(2)} | **${all.r10.toFixed(2)}** |`,
    );
  }
  console.log(lines.join('\n'));
  console.log(
    `\n${result.turns} turns, ingest ${result.ingest_ms_per_turn} ms/turn (every store: recordTurn in three, saves in four), ` +
      `default query p50 ${result.query_ms_p50} ms, p95 ${result.query_ms_p95} ms`,
  );
  if (dumpPath) writeFileSync(dumpPath, JSON.stringify(dump));
  if (!quick && !only)
    writeFileSync(join(here, 'results-recall.json'), JSON.stringify(result, null, 2) + '\n');
}

function round(n: number) {
  return Math.round(n * 1000) / 1000;
}

await main();
