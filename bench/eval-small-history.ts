// `npm run eval:small-history [path] [--sessions=N] [--bare]`: what recall brings while a
// person's history is still small, measured on LoCoMo conversations (Maharana et al., ACL 2024;
// CC BY-NC 4.0, read in place from ../shared/data/locomo-dev.json, never copied into the project).
//
// The episodic setup of eval:recall (each session its own chat, turns recorded, nothing saved),
// but only a conversation's first `--sessions=N` sessions (default 2: about 40 turns; 0 = all).
// Asked a day later as a chat turn asks (the question stored and indexed in a new chat, then
// `prepareTurn`'s recall with it left out, limit 10), or with `--bare` through `recallMemory`
// alone (the question never indexed):
// - the questions whose evidence lies in those sessions: evidence recall@10 and turns returned;
// - questions about the other conversations (their first 30 each: people and events this
//   history never mentions): turns returned, and the share of questions that got any. Every
//   one of those is noise in the prompt.
//
// Prints one table row; bench/README.md ("Small histories") carries the figures.
import 'fake-indexeddb/auto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { BUNDLED_MODEL, createEmbedder, openMemory } from '../src/memory';
import { DEFAULT_DATA, normaliseEvidence, readSamples, sessionsOf, turnText } from './core/locomo';

const DAY = 86_400_000;
const UNRELATED_PER_CONVERSATION = 30;
/**
 * Everyday messages that ask nothing of memory (written for this eval): a greeting, thanks, a
 * task about something new. Every past turn recalled for one is noise in the prompt.
 */
const SMALL_TALK = [
  'Good morning! How are you?',
  'Hi there!',
  'Thanks, that is all for this week.',
  'Good night, talk to you tomorrow.',
  'Can you help me write an email to my landlord?',
  'Tell me a joke.',
  'Write a short poem about the sea.',
  'What is the capital of Australia?',
  'Translate "good luck" into Spanish.',
  'How many days are there in a leap year?',
  'Can you explain how a rainbow forms?',
  'Give me a recipe for pancakes.',
  'I am bored, suggest something to do.',
  'What is a good name for a goldfish?',
  'Summarise the plot of Hamlet in two sentences.',
  'Okay, sounds good.',
  'Let us talk about something else.',
  'What does the word "ephemeral" mean?',
  'How do I convert Celsius to Fahrenheit?',
  'Please list three tips for better sleep.',
];

async function main() {
  const arg = process.argv.slice(2).find((a) => !a.startsWith('--'));
  const file = resolve(arg ?? DEFAULT_DATA);
  if (!existsSync(file)) {
    console.error(`eval:small-history: no data at ${file} (see bench/README.md, "Recall").`);
    process.exit(2);
  }
  const sessionsArg = process.argv.find((a) => a.startsWith('--sessions='));
  const keep = sessionsArg ? Number(sessionsArg.slice('--sessions='.length)) : 2;
  if (!Number.isInteger(keep) || keep < 0) {
    console.error('eval:small-history: --sessions= takes a whole number (0 = all sessions)');
    process.exit(2);
  }
  const bare = process.argv.includes('--bare');
  const samples = readSamples(file);
  const embedder = createEmbedder({ model: BUNDLED_MODEL });
  await embedder.ready();
  const told = { questions: 0, r10: 0, returned: 0 };
  const unrelated = { questions: 0, returned: 0, any: 0 };
  const chatter = { questions: 0, returned: 0, any: 0 };
  let turns = 0;
  /**
   * A fresh memory holding `sample`'s kept sessions, each its own chat, and how to ask it. Each
   * kind of question gets its own (asked chats are deleted, but what a deleted chat leaves, such
   * as the sentence centroid, would make one kind's figures depend on the other's).
   */
  async function history(sample: (typeof samples)[number]) {
    const sessions = sessionsOf(sample).slice(0, keep || undefined);
    let t = 0;
    const mem = openMemory({
      name: `small-${sample.sample_id}-${Date.now()}-${Math.random()}`,
      embedder,
      now: () => t,
    });
    const dia = new Map<number, string>();
    for (const s of sessions) {
      t = s.date;
      const chat = await mem.createConversation(`Session ${s.index}`);
      if (chat.status !== 'SUCCESS') throw new Error(chat.message);
      for (const turn of s.turns) {
        t += 30_000;
        const role = turn.speaker === sample.conversation.speaker_a ? 'user' : 'assistant';
        const r = await mem.recordTurn({ conversationId: chat.id, role, text: turnText(turn) });
        if (r.status !== 'SUCCESS') throw new Error(`recordTurn: ${r.message}`);
        dia.set(r.turnId, turn.dia_id);
      }
    }
    t += DAY;
    // As a chat turn asks (prepareTurn): the question stored in a new chat and indexed first,
    // then recalled with it left out; the chat is deleted after, so questions do not pile up.
    // `--bare`: recallMemory alone, the question never indexed (the model's own call).
    const ask = async (question: string) => {
      if (bare) {
        const r = await mem.recallMemory(question, 10);
        if (!Array.isArray(r)) throw new Error(`recallMemory: ${r.message}`);
        return r.flatMap((h) => (h.kind === 'turn' ? [dia.get(h.turnId) ?? ''] : []));
      }
      const chat = await mem.createConversation('New chat');
      if (chat.status !== 'SUCCESS') throw new Error(chat.message);
      const asked = await mem.addMessage({ conversationId: chat.id, role: 'user', text: question });
      if (asked.status !== 'SUCCESS') throw new Error(asked.message);
      const ctx = await mem.prepareTurn({
        conversationId: chat.id,
        index: { turnId: asked.id, text: question },
        recall: { query: question, limit: 10 },
      });
      await mem.deleteConversation(chat.id);
      return ctx.recall.flatMap((h) => (h.kind === 'turn' ? [dia.get(h.turnId) ?? ''] : []));
    };
    return { ask, known: new Set(dia.values()), turns: dia.size, close: () => mem.close() };
  }

  const noise = async (
    sample: (typeof samples)[number],
    messages: readonly string[],
    into: typeof unrelated,
  ) => {
    const h = await history(sample);
    for (const message of messages) {
      const got = await h.ask(message);
      into.questions++;
      into.returned += got.length;
      if (got.length) into.any++;
    }
    await h.close();
  };

  for (const [si, sample] of samples.entries()) {
    const h = await history(sample);
    turns += h.turns;
    const all = new Set(sessionsOf(sample).flatMap((s) => s.turns.map((x) => x.dia_id)));
    for (const qa of sample.qa) {
      const evidence = normaliseEvidence(qa.evidence ?? [], all);
      if (!evidence.length || !evidence.every((e) => h.known.has(e))) continue;
      const got = await h.ask(qa.question);
      told.questions++;
      told.returned += got.length;
      told.r10 += evidence.filter((e) => got.includes(e)).length / evidence.length;
    }
    await h.close();
    const others = samples.flatMap((o, oi) =>
      oi === si ? [] : o.qa.slice(0, UNRELATED_PER_CONVERSATION).map((qa) => qa.question),
    );
    await noise(sample, others, unrelated);
    await noise(sample, SMALL_TALK, chatter);
  }
  const f = (n: number, d = 3) => n.toFixed(d);
  console.log(
    `sessions kept: ${keep || 'all'} (${turns} turns in ${samples.length} conversations), ` +
      `${bare ? 'recallMemory alone' : 'as a chat turn asks (prepareTurn)'}\n` +
      '| told: R@10 (questions) | told: turns returned | unrelated: turns returned (questions) | unrelated: share with any | small talk: turns returned (messages) | small talk: share with any |\n' +
      '|---|---|---|---|---|---|\n' +
      `| ${f(told.r10 / told.questions)} (${told.questions}) | ${f(told.returned / told.questions, 2)} | ` +
      `${f(unrelated.returned / unrelated.questions, 2)} (${unrelated.questions}) | ${f(unrelated.any / unrelated.questions)} | ` +
      `${f(chatter.returned / chatter.questions, 2)} (${chatter.questions}) | ${f(chatter.any / chatter.questions)} |`,
  );
}

await main();
process.exit(0);
