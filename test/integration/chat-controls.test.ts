// Chat controls in the headless session against fake servers (docs/chat.md): a tool call that
// cannot be read goes back to the model as a failed call; regenerate keeps alternatives and the
// one shown is the one sent; edit and resend drops what came after; continue appends, with the
// reply as the assistant's start where the server takes one; the recalled note; titles; delete;
// what a turn's result names besides its answer (the user message, the reply, a memory write).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTINUE_INSTRUCTION,
  createChatSession,
  type ChatSettings,
  type SessionEvent,
} from '../../src/chat/chat-session';
import { canContinue } from '../../src/chat/continue';
import { createConnector } from '../../src/llm/connector';
import { splitThinking, withoutThinking } from '../../src/llm/thinking';
import type { ChatMessage } from '../../src/llm/types';
import {
  BUNDLED_MODEL,
  createEmbedder,
  openMemory,
  type Embedder,
  type MemoryApi,
} from '../../src/memory';
import { replyGroups, titleFromMessage, visibleMessages } from '../../src/memory/replies';
import {
  startFakeServer,
  type FakeKind,
  type FakeReply,
  type FakeServer,
  type FakeServerOptions,
  type RecordedRequest,
} from '../fixtures/fake-llm';

let embedder: Embedder;
const open: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  embedder = createEmbedder({ model: BUNDLED_MODEL });
  await embedder.ready();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});
afterAll(() => embedder.dispose());

async function setup(
  kind: FakeKind,
  fakeOptions: FakeServerOptions,
  settings: Partial<ChatSettings> = {},
) {
  const fake = await startFakeServer(kind, {
    firstEventDelayMs: 5,
    toolDelayMs: 5,
    tokenDelayMs: 0,
    ...fakeOptions,
  });
  const memory: MemoryApi = openMemory({ name: `controls-${crypto.randomUUID()}`, embedder });
  open.push(fake, memory);
  const events: SessionEvent[] = [];
  const session = createChatSession({
    memory,
    connector: createConnector({ endpoint: fake.url, retry: { attempts: 1, baseDelayMs: 5 } }),
    settings,
    onEvent: (e) => events.push(e),
  });
  const conv = await memory.createConversation();
  if (conv.status !== 'SUCCESS') throw new Error('no conversation');
  return { fake, memory, events, session, conversationId: conv.id };
}

/** What a generation request sent: its chat messages (system left out), or KoboldCPP's prompt. */
function sent(req: RecordedRequest): { messages: ChatMessage[]; prompt?: string } {
  const body = req.body as { messages?: ChatMessage[]; prompt?: string };
  return {
    messages: (body.messages ?? []).filter((m) => m.role !== 'system'),
    prompt: body.prompt,
  };
}

const lastGeneration = (fake: FakeServer) => sent(fake.generations().at(-1)!);

describe('a tool call the model wrote but that cannot be read', () => {
  it('prompted: goes back to the model as a failed call that says why; its retry runs', async () => {
    const s = await setup(
      'plain',
      {
        replies: [
          {
            text: 'Saving it.\n<tool_call>{"name": "saveMemory", "arguments": {"path": "User/Cat", "content": "Tom"</tool_call>',
          },
          {
            text: '<tool_call>{"name": "saveMemory", "arguments": {"path": "User/Cat", "content": "Tom"}}</tool_call>',
          },
          { text: 'Saved: your cat is Tom.' },
        ],
      },
      { toolMode: 'prompted' },
    );
    const r = await s.session.send(s.conversationId, 'Remember that my cat is called Tom.');
    expect(r).toMatchObject({ status: 'answered', text: 'Saved: your cat is Tom.', rounds: 2 });
    const results = s.events.filter(
      (e): e is Extract<SessionEvent, { type: 'tool-result' }> => e.type === 'tool-result',
    );
    expect(results.map((e) => [e.name, e.refused])).toEqual([
      ['saveMemory', true],
      ['saveMemory', false],
    ]);
    expect(results[0].result).toMatchObject({
      status: 'ERROR',
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(/could not be read: its JSON is not valid .*Nothing was run/),
    });
    // The model was told, in the prompted protocol's form, before its second try.
    const second = sent(s.fake.generations()[1]).messages;
    expect(second.at(-1)).toMatchObject({ role: 'user' });
    expect(second.at(-1)!.content).toMatch(/^<tool_response>.*could not be read/s);
    // The failed round is stored like any other, call and result together.
    const messages = await s.memory.getMessages(s.conversationId);
    expect(messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(messages[1]).toMatchObject({
      text: 'Saving it.',
      toolCalls: [{ name: 'saveMemory', result: { status: 'ERROR' } }],
    });
    expect(messages[2].toolCallId).toBe(messages[1].toolCalls![0].id);
    expect(await s.memory.queryMemory('User/Cat')).toMatchObject({ content: 'Tom' });
  });

  it('native: a <tool_call> block in the text that cannot be read is answered the same way', async () => {
    const s = await setup('llamacpp', {
      replies: [
        { text: '<tool_call>{"name": listMemory}</tool_call>' },
        { text: 'Nothing saved yet.' },
      ],
    });
    const r = await s.session.send(s.conversationId, 'What do you remember?');
    expect(r).toMatchObject({ status: 'answered', rounds: 1 });
    const second = sent(s.fake.generations()[1]).messages;
    expect(second.at(-1)).toMatchObject({ role: 'tool' });
    expect(second.at(-1)!.content).toMatch(/could not be read.*valid JSON/);
  });

  it('counts against the round limit', async () => {
    const s = await setup('plain', { defaultReply: { text: '<tool_call>{oops</tool_call>' } });
    const r = await s.session.send(s.conversationId, 'Loop.');
    expect(r.status).toBe('round-limit');
    expect(s.fake.generations()).toHaveLength(9);
  });
});

describe('regenerate', () => {
  it('keeps every alternative, stored; the one shown is the one sent next', async () => {
    let n = 0;
    const s = await setup('llamacpp', {
      defaultReply: (req) => {
        const last = sent(req).messages.at(-1)?.content ?? '';
        return { text: /follow/.test(last) ? 'Follow-up answer.' : `Answer ${++n}.` };
      },
    });
    const c = s.conversationId;
    await s.session.send(c, 'Name a colour.');
    const r2 = await s.session.regenerate(c);
    const r3 = await s.session.regenerate(c);
    expect([r2.text, r3.text]).toEqual(['Answer 2.', 'Answer 3.']);
    // A regeneration sends the user's message without the earlier answers.
    expect(lastGeneration(s.fake).messages.map((m) => m.content)).toEqual(['Name a colour.']);
    const all = await s.memory.getMessages(c);
    const [group] = replyGroups(all);
    expect(group.alternatives).toEqual([0, 1, 2]);
    expect(group.shown).toBe(2);
    expect(visibleMessages(all).map((m) => m.text)).toEqual(['Name a colour.', 'Answer 3.']);

    // Back to the first: it is what the model sees next.
    expect(await s.memory.selectAlternative(group.user!.id, 0)).toEqual({ status: 'SUCCESS' });
    await s.session.send(c, 'And a follow-up?');
    expect(lastGeneration(s.fake).messages.map((m) => m.content)).toEqual([
      'Name a colour.',
      'Answer 1.',
      'And a follow-up?',
    ]);
    // Only the last reply regenerates; alternatives of an older one stay switchable.
    expect(await s.memory.selectAlternative(group.user!.id, 7)).toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('a regeneration that fails before storing anything leaves the shown reply as it was', async () => {
    const s = await setup('llamacpp', {
      replies: [{ text: 'First.' }, { error: { status: 500, body: { error: { message: 'x' } } } }],
    });
    await s.session.send(s.conversationId, 'Hello.');
    const r = await s.session.regenerate(s.conversationId);
    expect(r.status).toBe('error');
    const all = await s.memory.getMessages(s.conversationId);
    expect(visibleMessages(all).map((m) => m.text)).toEqual(['Hello.', 'First.']);
  });
});

describe('answer again', () => {
  it('a question whose turn failed before any reply is answered again, as its first reply', async () => {
    const s = await setup('llamacpp', {
      replies: [{ error: { status: 500, body: { error: { message: 'x' } } } }, { text: 'Hi.' }],
    });
    expect((await s.session.send(s.conversationId, 'Hello?')).status).toBe('error');
    const r = await s.session.regenerate(s.conversationId);
    expect(r).toMatchObject({ status: 'answered', text: 'Hi.' });
    const all = await s.memory.getMessages(s.conversationId);
    expect(all.map((m) => [m.role, m.text, m.meta?.alt])).toEqual([
      ['user', 'Hello?', undefined],
      ['assistant', 'Hi.', undefined],
    ]);
    expect(s.events.some((e) => e.type === 'alternative')).toBe(false);
  });
});

describe('edit and resend', () => {
  it('gives the message new words, drops everything after it with its index, and answers again', async () => {
    const s = await setup('llamacpp', {
      defaultReply: (req) => ({ text: `You said: ${sent(req).messages.at(-1)?.content}` }),
    });
    const c = s.conversationId;
    await s.session.send(c, 'My dog is called Rex.');
    await s.session.send(c, 'It likes zebras.');
    const [first] = await s.memory.getMessages(c);
    const r = await s.session.resend(c, first.id!, 'My dog is called Bolt.');
    expect(r).toMatchObject({ status: 'answered', text: 'You said: My dog is called Bolt.' });
    const all = await s.memory.getMessages(c);
    expect(all.map((m) => m.text)).toEqual([
      'My dog is called Bolt.',
      'You said: My dog is called Bolt.',
    ]);
    expect(all[0].id).toBe(first.id);
    // The old words and the dropped turns left the index; the new words are in it.
    const texts = async (q: string) =>
      (await s.memory.searchChunks(c, q, 10, { signals: 'lexical' })).map((h) => h.chunk.text);
    expect(await texts('zebras')).toEqual([]);
    expect(await texts('Rex')).toEqual([]);
    expect(await texts('Bolt')).toContain('My dog is called Bolt.');
  });
});

describe('continue', () => {
  const LONG = 'One two three four five six seven eight nine ten eleven twelve.';

  it('koboldcpp: the prompt ends with the reply so far after the output tag; the rest is appended', async () => {
    const s = await setup(
      'koboldcpp',
      { replies: [{ text: LONG }, { text: ' and the rest of it.' }] },
      { toolMode: 'prompted', maxOutputTokens: 6 },
    );
    const r = await s.session.send(s.conversationId, 'Count.');
    expect(r.status).toBe('answered');
    let [, reply] = await s.memory.getMessages(s.conversationId);
    expect(reply.meta).toMatchObject({ cut: 'length' });
    const cont = await s.session.continueReply(s.conversationId, reply.id!);
    expect(cont.status).toBe('answered');
    const prompt = lastGeneration(s.fake).prompt!;
    expect(prompt.endsWith(`{{[INPUT]}}Count.{{[OUTPUT]}}${reply.text}`)).toBe(true);
    [, reply] = await s.memory.getMessages(s.conversationId);
    expect(reply.text).toMatch(/^One two three .* and the rest of it\.$/);
    expect(reply.meta?.cut).toBeUndefined();
    const hits = await s.memory.searchChunks(s.conversationId, 'rest', 5, { signals: 'lexical' });
    expect(hits.map((h) => h.chunk.text).join(' ')).toContain('the rest of it');
  });

  it('llama.cpp: the last message sent is the reply so far, as the assistant', async () => {
    const s = await setup('llamacpp', { replies: [{ text: 'The answer is' }, { text: ' 42.' }] });
    await s.session.send(s.conversationId, 'What is it?');
    const [, reply] = await s.memory.getMessages(s.conversationId);
    await s.session.continueReply(s.conversationId, reply.id!);
    expect(lastGeneration(s.fake).messages.at(-1)).toEqual({
      role: 'assistant',
      content: 'The answer is',
    });
    const [, after] = await s.memory.getMessages(s.conversationId);
    expect(after.text).toBe('The answer is 42.');
  });

  it('other servers are asked in words, and a new word starts after a space', async () => {
    const s = await setup('ollama', { replies: [{ text: 'Apples are' }, { text: 'red.' }] });
    await s.session.send(s.conversationId, 'Colour?');
    const [, reply] = await s.memory.getMessages(s.conversationId);
    await s.session.continueReply(s.conversationId, reply.id!);
    expect(lastGeneration(s.fake).messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'Apples are' },
      { role: 'user', content: CONTINUE_INSTRUCTION },
    ]);
    const [, after] = await s.memory.getMessages(s.conversationId);
    expect(after.text).toBe('Apples are red.');
  });

  it('a reasoning server (thinking sent apart): the continuation’s new thinking is left out of the answer', async () => {
    const s = await setup('ollama', {
      replies: [
        { reasoning: 'Where did Ana live?', text: 'Ana lived in Lisbon,' },
        { reasoning: 'The user wants me to continue the reply.', text: 'and then moved to Porto.' },
      ],
    });
    await s.session.send(s.conversationId, 'Where did Ana live?');
    const [, reply] = await s.memory.getMessages(s.conversationId);
    const at = s.events.length;
    await s.session.continueReply(s.conversationId, reply.id!);
    const [, after] = await s.memory.getMessages(s.conversationId);
    expect(after.text).toBe(
      '<think>Where did Ana live?</think>Ana lived in Lisbon, and then moved to Porto.',
    );
    expect(withoutThinking(after.text)).toBe('Ana lived in Lisbon, and then moved to Porto.');
    // Shown as it came: the new words alone, a space apart.
    const shown = s.events.slice(at).flatMap((e) => (e.type === 'token' ? [e.text] : []));
    expect(shown.join('')).toBe(' and then moved to Porto.');
    const hits = await s.memory.searchChunks(null, 'continue', 5, { signals: 'lexical' });
    expect(hits).toEqual([]);
  });

  it('a reply stopped while it thought goes on thinking, then answers after it', async () => {
    const s = await setup('ollama', {
      replies: [{ text: 'unused' }, { reasoning: 'Right.', text: 'It is 42.' }],
    });
    await s.session.send(s.conversationId, 'Think hard.');
    const [, reply] = await s.memory.getMessages(s.conversationId);
    // As a reply stopped while its thinking came is stored.
    await s.memory.updateMessage(reply.id!, {
      text: '<think>Let me think about every angle',
      meta: { aborted: true },
    });
    const r = await s.session.continueReply(s.conversationId, reply.id!);
    expect(r.status).toBe('answered');
    const [, after] = await s.memory.getMessages(s.conversationId);
    expect(splitThinking(after.text)).toEqual({
      thought: 'Let me think about every angle Right.',
      answer: 'It is 42.',
    });
    expect(after.text.split('<think>')).toHaveLength(2);
  });

  it('the question is recalled for again: what another chat told goes into the continued prompt, and into the note', async () => {
    const s = await setup('llamacpp', {
      replies: [{ text: 'Noted.' }, { text: 'She is moving to' }, { text: ' Lisbon, in May.' }],
    });
    await s.session.send(s.conversationId, 'My sister Ana is moving to Lisbon in May.');
    const other = await s.memory.createConversation('Plans');
    if (other.status !== 'SUCCESS') throw new Error('no conversation');
    await s.session.send(other.id, 'Where is my sister Ana moving to?');
    const asked = sent(s.fake.generations()[1]);
    const told = 'My sister Ana is moving to Lisbon in May.';
    const [, reply] = await s.memory.getMessages(other.id);
    expect(reply.meta?.recalledTurns).toHaveLength(1);

    await s.session.continueReply(other.id, reply.id!);
    const system = (s.fake.generations()[2].body as { messages: ChatMessage[] }).messages[0];
    expect(system.content).toContain(JSON.stringify(told));
    expect(asked.messages.at(-1)?.content).toBe('Where is my sister Ana moving to?');
    const [, after] = await s.memory.getMessages(other.id);
    expect(after.text).toBe('She is moving to Lisbon, in May.');
    // The note names what both prompts recalled, once.
    expect(after.meta?.recalledTurns).toEqual(reply.meta?.recalledTurns);
  });

  it('Stop while continuing keeps what arrived, appended and marked stopped', async () => {
    const s = await setup('llamacpp', {
      replies: [{ text: 'The story goes' }, { hang: true, text: ' on and on' }],
    });
    await s.session.send(s.conversationId, 'Tell it.');
    const [, reply] = await s.memory.getMessages(s.conversationId);
    const stop = new AbortController();
    const going = s.session.continueReply(s.conversationId, reply.id!, stop.signal, (e) => {
      if (e.type === 'token' && e.text.includes('on')) stop.abort();
    });
    const r = await going;
    expect(r.status).toBe('aborted');
    const [, after] = await s.memory.getMessages(s.conversationId);
    expect(after.text).toMatch(/^The story goes on/);
    expect(after.meta).toMatchObject({ aborted: true });
  });

  it('Stop while continuing, before a word came: the reply stays as it was, cut by the length limit', async () => {
    // KoboldCPP reads the prompt before its first event: the Stop comes in that wait.
    const s = await setup(
      'koboldcpp',
      { firstEventDelayMs: 400, replies: [{ text: 'One two three four five.' }, { text: 'six' }] },
      { toolMode: 'prompted', maxOutputTokens: 3 },
    );
    await s.session.send(s.conversationId, 'Count.');
    const [, reply] = await s.memory.getMessages(s.conversationId);
    expect(reply.meta).toMatchObject({ cut: 'length' });
    const stop = new AbortController();
    const going = s.session.continueReply(s.conversationId, reply.id!, stop.signal);
    await expect.poll(() => s.fake.generations().length).toBe(2);
    stop.abort();
    expect(await going).toMatchObject({ status: 'aborted', text: reply.text });
    const [, after] = await s.memory.getMessages(s.conversationId);
    expect(after.text).toBe(reply.text);
    expect(after.meta).toEqual(reply.meta);
  });

  it('a reply stopped at the round limit is not continued, with or without words: regenerate it', async () => {
    const s = await setup('llamacpp', {
      defaultReply: {
        text: 'Let me look once more.',
        toolCalls: [{ name: 'listMemory', arguments: {} }],
      },
    });
    const r = await s.session.send(s.conversationId, 'Look around.');
    expect(r.status).toBe('round-limit');
    const stopped = (await s.memory.getMessages(s.conversationId)).at(-1)!;
    expect(stopped).toMatchObject({
      text: 'Let me look once more.',
      meta: { notice: 'round-limit' },
    });
    // The chat panel offers Continue by the same rule.
    expect(canContinue(stopped)).toBe(false);
    const cont = await s.session.continueReply(s.conversationId, stopped.id!);
    expect(cont.status).toBe('error');
    expect(cont.error?.message).toBe(
      'A reply stopped at the round limit cannot be continued: regenerate it, or ask again.',
    );
    expect(s.fake.generations()).toHaveLength(9);
  });

  it('only the last reply continues', async () => {
    const s = await setup('llamacpp', {});
    await s.session.send(s.conversationId, 'One.');
    await s.session.send(s.conversationId, 'Two.');
    const [, first] = await s.memory.getMessages(s.conversationId);
    const r = await s.session.continueReply(s.conversationId, first.id!);
    expect(r.status).toBe('error');
    expect(s.fake.generations()).toHaveLength(2);
  });
});

describe('the recalled note, titles and deleting', () => {
  it('a reply lists the memories auto-recall put into its prompt', async () => {
    const s = await setup('llamacpp', { defaultReply: { text: 'Tom, as you told me.' } });
    await s.memory.saveMemory('Pets/Cat', 'The cat is called Tom and likes sardines.');
    await s.session.send(s.conversationId, 'What is my cat called, the one that likes sardines?');
    const [, reply] = await s.memory.getMessages(s.conversationId);
    expect(reply.meta?.recalled).toEqual(['Pets/Cat']);
    expect(JSON.stringify(lastGeneration(s.fake))).not.toContain('Pets/Cat');
    expect(JSON.stringify(s.fake.generations()[0].body)).toContain('Pets/Cat');
  });

  it('a chat is named from its first message until the user renames it', async () => {
    const s = await setup('llamacpp', {});
    const c = s.conversationId;
    await s.session.send(
      c,
      '**Plan** the trip to Lisbon in May, with the kids and a budget of 2000 euros',
    );
    const title = async () => (await s.memory.listConversations()).find((x) => x.id === c)?.title;
    expect(await title()).toBe('Plan the trip to Lisbon in May, with the kids…');
    await s.session.send(c, 'Something else');
    expect(await title()).toBe('Plan the trip to Lisbon in May, with the kids…');
    const other = await s.memory.createConversation();
    if (other.status !== 'SUCCESS') throw new Error('no conversation');
    await s.memory.renameConversation(other.id, 'New chat');
    await s.session.send(other.id, 'Hello there');
    expect((await s.memory.listConversations()).find((x) => x.id === other.id)?.title).toBe(
      'New chat',
    );
    expect(titleFromMessage('   \n```\n\nhi')).toBe('hi');
    expect(titleFromMessage('   ')).toBe('');
  });

  it('deleting a reply with tool calls takes its tool results; deleting a question keeps the reply shown', async () => {
    let n = 0;
    const s = await setup('llamacpp', {
      defaultReply: (req) =>
        sent(req).messages.at(-1)?.role === 'tool' || n++ % 2
          ? { text: `Reply ${n}.` }
          : { toolCalls: [{ name: 'listMemory', arguments: {} }] },
    });
    const c = s.conversationId;
    await s.session.send(c, 'First question.');
    await s.session.send(c, 'Second question.');
    await s.session.regenerate(c);
    let all = await s.memory.getMessages(c);
    const withCalls = all.find((m) => m.toolCalls?.length)!;
    expect(await s.memory.deleteMessage(withCalls.id)).toEqual({ status: 'SUCCESS', deleted: 2 });
    all = await s.memory.getMessages(c);
    expect(all.some((m) => m.role === 'tool' && m.toolCallId === withCalls.toolCalls![0].id)).toBe(
      false,
    );
    // The second question has two alternatives; deleting it keeps the one shown only.
    const second = all.find((m) => m.text === 'Second question.')!;
    const shownBefore = visibleMessages(all).filter((m) => m.id! > second.id!);
    const r = await s.memory.deleteMessage(second.id);
    expect(r.status).toBe('SUCCESS');
    all = await s.memory.getMessages(c);
    expect(all.some((m) => m.text === 'Second question.')).toBe(false);
    expect(
      visibleMessages(all)
        .slice(-shownBefore.length)
        .map((m) => m.id),
    ).toEqual(shownBefore.map((m) => m.id));
    // No alternative is left hidden, and 'Reply 2.' (the one not shown) is gone.
    expect(visibleMessages(all)).toHaveLength(all.length);
    expect(all.some((m) => m.text === 'Reply 2.')).toBe(false);
    expect(await s.memory.deleteMessage(second.id)).toMatchObject({ code: 'NOT_FOUND' });
  });
});

/** A llama.cpp fake that answers "Noted." once its script is done. */
const llama = (replies: FakeReply[]) =>
  setup('llamacpp', { replies, defaultReply: { text: 'Noted.' } });

const save = (path: string, content: unknown): FakeReply => ({
  toolCalls: [{ name: 'saveMemory', arguments: { path, content } }],
});

describe('a turn result names its exchange', () => {
  it('send with a save: the user message, the final answer, and wrote', async () => {
    const s = await llama([save('Trip/Flight', 'Ninth, 7 am'), { text: 'Saved your flight.' }]);
    const r = await s.session.send(s.conversationId, 'My flight is on the ninth at 7 am.');
    const messages = await s.memory.getMessages(s.conversationId);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(r).toMatchObject({
      status: 'answered',
      text: 'Saved your flight.',
      userId: messages[0].id,
      replyId: messages[3].id,
      wrote: true,
    });
  });

  it('send that only reads, or whose save is refused, did not write', async () => {
    const s = await llama([
      { toolCalls: [{ name: 'listMemory', arguments: {} }] },
      { text: 'Nothing saved yet.' },
      { toolCalls: [{ name: 'saveMemory', arguments: { path: 'Trip' } }] },
      { text: 'I could not save that.' },
    ]);
    const read = await s.session.send(s.conversationId, 'What do you remember?');
    expect(read).toMatchObject({ status: 'answered', wrote: false });
    // Without `content` the schema refuses the call before it runs.
    const refused = await s.session.send(s.conversationId, 'Remember the trip.');
    expect(refused).toMatchObject({ status: 'answered', wrote: false });
    const messages = await s.memory.getMessages(s.conversationId);
    expect(messages[5].toolCalls?.[0].result).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(refused.userId).toBe(messages[4].id);
    expect(refused.replyId).toBe(messages.at(-1)?.id);
  });

  it('regenerate and resend name the message they answer again', async () => {
    const s = await llama([
      { text: 'First answer.' },
      save('Trip/Hotel', 'By the river'),
      { text: 'Saved the hotel.' },
      { text: 'Edited answer.' },
    ]);
    const first = await s.session.send(s.conversationId, 'Where do we stay?');
    expect(first).toMatchObject({ status: 'answered', wrote: false });
    const userId = first.userId!;
    expect(first.replyId).toBeGreaterThan(userId);

    const again = await s.session.regenerate(s.conversationId);
    const messages = await s.memory.getMessages(s.conversationId);
    expect(again).toMatchObject({
      status: 'answered',
      text: 'Saved the hotel.',
      userId,
      replyId: messages.at(-1)?.id,
      wrote: true,
    });
    expect(again.replyId).not.toBe(first.replyId);

    const edited = await s.session.resend(s.conversationId, userId, 'Which hotel?');
    const after = await s.memory.getMessages(s.conversationId);
    expect(after.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(edited).toMatchObject({
      status: 'answered',
      userId,
      replyId: after[1].id,
      wrote: false,
    });
  });

  it('a notice is not the reply: the round limit names the last round stored', async () => {
    const s = await llama(
      Array.from({ length: 10 }, () => ({
        toolCalls: [{ name: 'listMemory', arguments: {} }],
      })),
    );
    const r = await s.session.send(s.conversationId, 'Look around.');
    expect(r.status).toBe('round-limit');
    const messages = await s.memory.getMessages(s.conversationId);
    const notice = messages.at(-1)!;
    expect(notice.meta?.notice).toBe('round-limit');
    const lastRound = messages.filter((m) => m.role === 'assistant' && !m.meta?.notice).at(-1);
    expect(r.replyId).toBe(lastRound?.id);
    expect(r.replyId).not.toBe(notice.id);
    expect(r.wrote).toBe(false);
  });
});
