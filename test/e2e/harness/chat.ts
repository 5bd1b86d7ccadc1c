// Preview harness for the chat panel and the conversation list: canned conversations in an
// in-memory fake of the memory client, and a fake chat session that streams a scripted answer
// (with a saveMemory call when the message says "remember", an error when it says "offline").
// Scenarios: ?scenario=demo (default) | empty | none | offline, &status=connecting|error,
// &list=1 shows the conversation list on narrow screens too.
// ?scenario=live&endpoint=<model server URL> is the real chat session and connector against a
// model server (chat.server.ts in the streaming tests), over an in-page memory that stores
// messages (not a user message saying "no room": storage full) and indexes nothing; &maxTokens sets "Max output tokens" (default 512).
// ?scenario=live&model=<GGUF URL> is the same with the model in this browser (the in-page
// connector, tools in the prompt) instead of a server.
import {
  createChatSession,
  type ChatSession,
  type SessionEvent,
  type TurnResult,
} from '../../../src/chat/chat-session';
import { createConnector, type Connector } from '../../../src/llm/connector';
import { createInPageConnector } from '../../../src/llm/in-page/connector';
import { LlmError } from '../../../src/llm/types';
import type {
  Conversation,
  MemoryApi,
  Message,
  Role,
  ToolCallRecord,
} from '../../../src/memory/types';
import { notifyMemoryChange } from '../../../src/ui/memory-watch';
import '../../../src/ui/sm-chat';
import type { ChatStatus } from '../../../src/ui/sm-chat';
import '../../../src/ui/sm-conversations';
import { renderMarkdown } from '../../../src/ui/markdown';
import type { MemoryClient } from '../../../src/worker-client';

const params = new URLSearchParams(location.search);
const scenario = params.get('scenario') ?? 'demo';

const sheet = new CSSStyleSheet();
sheet.replaceSync(`
  html, body { margin: 0; height: 100%; }
  body { display: flex; flex-direction: column; background: #f6f7f9; }
  #layout { flex: 1; min-height: 0; display: grid; grid-template-columns: 260px minmax(0, 1fr); }
  sm-conversations { border-right: 1px solid #d5dae1; background: #fff; }
  sm-chat { min-width: 0; }
  #events { margin: 0; max-height: 0; overflow: auto; font: 11px monospace; }
  body.show-events #events { max-height: 80px; border-top: 1px solid #d5dae1; padding: 4px 8px; }
  @media (max-width: 700px) {
    #layout { grid-template-columns: minmax(0, 1fr); }
    body:not(.list) sm-conversations { display: none; }
    body.list sm-chat { display: none; }
  }
`);
document.adoptedStyleSheets = [sheet];
if (params.get('list')) document.body.classList.add('list');
if (params.get('events')) document.body.classList.add('show-events');

const DAY = 86_400_000;
const now = Date.now();

const conversations: Conversation[] = [
  {
    id: 3,
    title: 'Planning HaloWeave',
    created: new Date(now - 3 * DAY),
    modified: new Date(now - 120_000),
  },
  {
    id: 2,
    title: 'Recipes for the week, with a rather long title that needs to be cut',
    created: new Date(now - 5 * DAY),
    modified: new Date(now - DAY - 3_600_000),
  },
  {
    id: 1,
    title: 'New chat',
    created: new Date(now - 40 * DAY),
    modified: new Date(now - 40 * DAY),
  },
];

const messages: Message[] = [];
let nextId = 1;

function add(
  conversationId: number,
  role: Role,
  text: string,
  extra: Partial<Message> = {},
): number {
  const id = nextId++;
  messages.push({
    id,
    conversationId,
    role,
    text,
    time: new Date(now - 3_600_000 + id * 60_000),
    ...extra,
  });
  return id;
}

function addToolTurn(conversationId: number, text: string, calls: ToolCallRecord[]): void {
  add(conversationId, 'assistant', text, { toolCalls: calls, meta: { mode: 'native' } });
  for (const c of calls) {
    add(conversationId, 'tool', JSON.stringify(c.result), {
      toolCallId: c.id,
      meta: { name: c.name },
    });
  }
}

if (scenario === 'demo' || scenario === 'offline') {
  const c = 3;
  add(
    c,
    'user',
    'I want HaloWeave to support multiple windows.\nUsers should drag tabs between windows and keep them in sync. Remember that as a goal.',
  );
  addToolTurn(c, '', [
    {
      id: 'call_1',
      name: 'saveMemory',
      arguments: {
        path: 'HaloWeave/Goals/MultiWindowSupport',
        content: {
          goal: 'Support multiple windows',
          detail: 'Drag tabs between windows; keep them in sync',
          priority: 'high',
        },
      },
      result: {
        status: 'SUCCESS',
        path: 'HaloWeave/Goals/MultiWindowSupport',
        version: 1,
        contextTokens: 212,
        chunksStored: 3,
      },
    },
  ]);
  add(
    c,
    'assistant',
    "Saved it under **HaloWeave/Goals/MultiWindowSupport**. A plan:\n\n1. Share state with a `BroadcastChannel`\n2. Give every window an id\n3. Move tabs with drag and drop\n\n```ts\nconst channel = new BroadcastChannel('haloweave');\nchannel.postMessage({ type: 'tab-moved', tabId, to: windowId });\n```\n\n> Windows on other devices are out of scope for now.",
  );
  add(
    c,
    'user',
    'What goals do we have? Also, render this: <img src=x onerror=alert(1)> <script>alert(2)</script>',
  );
  addToolTurn(c, 'Let me look.', [
    {
      id: 'call_2',
      name: 'queryMemoryHeading',
      arguments: { path: 'HaloWeave/Goals', query: 'goals of the project' },
      result: {
        status: 'SUCCESS',
        path: 'HaloWeave/Goals',
        query: 'goals of the project',
        totalChildren: 3,
        children: [
          {
            path: 'HaloWeave/Goals/MultiWindowSupport',
            heading: 'MultiWindowSupport',
            content: 'Support multiple windows',
            modified: new Date(now - 3_000_000),
            score: 0.71,
            similarity: 0.62,
            recency: 0.99,
          },
          {
            path: 'HaloWeave/Goals/SchemaDesign',
            heading: 'SchemaDesign',
            content: { goal: 'Design the database schema' },
            modified: new Date(now - DAY),
            score: 0.55,
            similarity: 0.41,
            recency: 0.97,
          },
        ],
      },
    },
    {
      id: 'call_3',
      name: 'queryMemory',
      arguments: { path: 'HaloWeave/Goals/Launch' },
      result: {
        status: 'NOT_FOUND',
        path: 'HaloWeave/Goals/Launch',
        message: 'No entry at "HaloWeave/Goals/Launch".',
      },
    },
    {
      id: 'call_4',
      name: 'listMemory',
      arguments: {},
      result: {
        status: 'SUCCESS',
        path: '',
        tree: { HaloWeave: { Goals: { MultiWindowSupport: 'Support multiple windows' } } },
        totalEntries: 12,
      },
    },
  ]);
  add(
    c,
    'assistant',
    [
      'There are **3 goals**; two are shown:',
      '',
      '| Goal | Score |',
      '| --- | ---: |',
      '| MultiWindowSupport | 0.71 |',
      '| SchemaDesign | 0.55 |',
      '',
      'The launch plan is not saved yet. See [the docs](https://example.com/docs) — and [this one](javascript:alert(1)) should not be a live link.',
      'Raw HTML stays text: <img src=x onerror=alert(1)> <b onclick="alert(3)">bold?</b> <script>alert(4)</script>',
      '![tracking pixel](http://tracker.example/p.png)',
      '',
      '- [x] schema drafted',
      '- [ ] launch plan',
    ].join('\n'),
  );
  add(c, 'user', 'Delete the old notes, then rename Goals to Aims.');
  addToolTurn(c, '', [
    {
      id: 'call_5',
      name: 'deleteMemory',
      arguments: { path: 'HaloWeave/Notes' },
      result: {
        status: 'ERROR',
        code: 'HAS_CHILDREN',
        message: '"HaloWeave/Notes" has 4 descendants; pass recursive: true to delete them all.',
      },
    },
    {
      id: 'call_6',
      name: 'deleteMemory',
      arguments: { path: 'HaloWeave/Notes', recursive: true },
      result: { status: 'SUCCESS', path: 'HaloWeave/Notes', deleted: 5 },
    },
    {
      id: 'call_7',
      name: 'moveMemory',
      arguments: { from: 'HaloWeave/Goals', to: 'HaloWeave/Aims' },
      result: { status: 'SUCCESS', from: 'HaloWeave/Goals', to: 'HaloWeave/Aims', moved: 3 },
    },
    {
      id: 'call_8',
      name: 'updateMemory',
      arguments: '{"path": "HaloWeave/Aims/SchemaDesign", "patch": {',
      result: {
        status: 'ERROR',
        code: 'INVALID_ARGUMENT',
        message:
          'The arguments are not valid JSON: Unexpected end of JSON input. Send a JSON object.',
      },
    },
  ]);
  add(c, 'assistant', 'Deleted 5 notes and renamed Goals to Aims. I was about to list the', {
    meta: { aborted: true },
  });
  add(c, 'user', 'And the schema?');
  add(c, 'assistant', 'The schema has tables for projects, tasks and', {
    meta: { error: 'DISCONNECTED' },
  });
  add(c, 'assistant', '', { meta: { notice: 'round-limit' } });
  add(2, 'user', 'What can I cook with leeks?');
  add(2, 'assistant', 'Leek and potato soup, or braised leeks with mustard.');
}

/** The part of the memory client the chat panel calls; results cross as structured clones, as through Comlink. */
const fakeMemory = {
  async getMessages(conversationId: number): Promise<Message[]> {
    await delay(5);
    return structuredClone(messages.filter((m) => m.conversationId === conversationId));
  },
} as unknown as MemoryClient;

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

const ANSWER =
  "Here is what I know about **HaloWeave**:\n\n- It should support *multiple windows*\n- Tabs move between windows by drag and drop\n- State is shared with `BroadcastChannel`\n\nAnything else you'd like me to remember?";

/**
 * A scripted model: "remember" → a saveMemory round first; "offline" → the server is down;
 * "slow" → slower tokens; "hang" → once stopped, the turn never winds up (the panel must end it).
 */
const fakeSession: ChatSession = {
  async server() {
    return {
      kind: 'koboldcpp',
      baseUrl: 'http://localhost:5001',
      model: 'Qwen2.5-7B-Instruct-Q4_K_M',
      contextSize: 8192,
      tokenizer: true,
    };
  },
  async toolMode() {
    return 'native';
  },
  async send(conversationId, text, signal, onEvent): Promise<TurnResult> {
    const say = (e: SessionEvent) => onEvent?.(e);
    const store = (role: Role, body: string, extra: Partial<Message> = {}) => {
      const id = add(conversationId, role, body, { time: new Date(), ...extra });
      say({ type: 'message', id, role });
      return id;
    };
    await delay(300, signal);
    if (/offline/i.test(text)) {
      const error = new LlmError(
        'SERVER_DOWN',
        'Nothing answers at http://localhost:5001. Start KoboldCPP (or your server), or fix the address in Settings.',
      );
      say({ type: 'notice', message: error.message });
      return { status: 'error', text: '', rounds: 0, error };
    }
    if (signal?.aborted) return { status: 'aborted', text: '', rounds: 0 };
    store('user', text);
    say({ type: 'thinking', round: 1 });
    let rounds = 0;
    if (/remember/i.test(text)) {
      await delay(900, signal);
      const args = { path: 'HaloWeave/Preferences/Tone', content: { tone: 'short answers' } };
      say({ type: 'tool-call', round: 1, id: 'live_1', name: 'saveMemory', args });
      await delay(700, signal);
      const result = {
        status: 'SUCCESS',
        path: args.path,
        version: 2,
        contextTokens: 90,
        chunksStored: 2,
      };
      say({
        type: 'tool-result',
        round: 1,
        id: 'live_1',
        name: 'saveMemory',
        result,
        refused: false,
      });
      store('assistant', '', {
        toolCalls: [{ id: 'live_1', name: 'saveMemory', arguments: args, result }],
      });
      store('tool', JSON.stringify(result), { toolCallId: 'live_1', meta: { name: 'saveMemory' } });
      rounds = 1;
      say({ type: 'thinking', round: 2 });
      say({
        type: 'notice',
        message:
          'Qwen2.5-7B on koboldcpp does not take native tool calls, so memory tools are now described in the prompt instead.',
      });
    }
    await delay(800, signal);
    const tokenMs = /slow/i.test(text) ? 250 : 40;
    let sent = '';
    for (const token of ANSWER.match(/\S+\s*|\s+/g) ?? []) {
      if (signal?.aborted) break;
      sent += token;
      say({ type: 'token', text: token });
      await delay(tokenMs, signal);
    }
    if (signal?.aborted && /hang/i.test(text)) await new Promise<never>(() => undefined);
    if (signal?.aborted) {
      store('assistant', sent.trim(), { meta: { aborted: true } });
      return { status: 'aborted', text: sent, rounds };
    }
    store('assistant', sent.trim());
    return { status: 'answered', text: sent, rounds };
  },
  // Chat controls are tested against the real session (test/e2e/chat-controls.test.ts).
  regenerate: () => Promise.resolve({ status: 'error', text: '', rounds: 0 }),
  resend: () => Promise.resolve({ status: 'error', text: '', rounds: 0 }),
  continueReply: () => Promise.resolve({ status: 'error', text: '', rounds: 0 }),
};

if (scenario === 'live') {
  conversations.splice(0, conversations.length, {
    id: 1,
    title: 'Live',
    created: new Date(now),
    modified: new Date(now),
  });
}

/**
 * The memory the live session writes to: messages only (stored at once), no index, no tools. A
 * user message that says "no room" finds the storage full.
 */
const liveMemory = {
  async addMessage(m: Parameters<MemoryApi['addMessage']>[0]) {
    if (m.role === 'user' && /no room/i.test(m.text)) {
      return {
        status: 'ERROR' as const,
        code: 'STORAGE_FULL' as const,
        message:
          'Browser storage is full; nothing was written. Delete or export old memories, or allow more storage.',
      };
    }
    const { conversationId, role, text, ...extra } = structuredClone(m);
    const id = add(conversationId, role, text, { time: new Date(), ...extra });
    notifyMemoryChange(['messages']);
    return { status: 'SUCCESS' as const, id };
  },
  /** A round: the message with the tool calls and their results, stored together. */
  async addMessages(ms: Parameters<MemoryApi['addMessage']>[0][]) {
    const ids = structuredClone(ms).map(({ conversationId, role, text, ...extra }) =>
      add(conversationId, role, text, { time: new Date(), ...extra }),
    );
    notifyMemoryChange(['messages']);
    return { status: 'SUCCESS' as const, ids };
  },
  async recordTurn(turn: { turnId?: number }) {
    return { status: 'SUCCESS' as const, turnId: turn.turnId ?? 0, chunks: 0 };
  },
  async recallMemory() {
    return [];
  },
  async memoryOutline() {
    return [];
  },
  async getMessages(conversationId: number) {
    return structuredClone(messages.filter((m) => m.conversationId === conversationId));
  },
  async prepareTurn(request: { conversationId: number }) {
    return {
      messages: structuredClone(
        messages.filter((m) => m.conversationId === request.conversationId),
      ),
      outline: [],
      recall: [],
    };
  },
  setTokenCounter() {},
} as unknown as MemoryApi;

/** How each in-page generation ended, as the engine said (`aborted` when Stop reached it). */
const generations: string[] = [];

/** The in-page connector for the GGUF at `url`, recording how each chat generation ended. */
function inPageConnector(url: string): Connector {
  const connector = createInPageConnector({
    name: url.split('/').at(-1) ?? url,
    files: async () => [await (await fetch(url)).blob()],
    contextSize: Number(params.get('context') ?? 2048),
  });
  return {
    ...connector,
    async chat(request) {
      const result = await connector.chat(request);
      generations.push(result.aborted ? 'aborted' : (result.finishReason ?? ''));
      return result;
    },
  };
}

/** Each finished turn's result and when it ended (performance.now()), for scripted checks. */
const turns: (TurnResult & { endedAt: number })[] = [];

function liveSession(): ChatSession {
  const model = params.get('model');
  const session = createChatSession({
    memory: liveMemory,
    connector: model
      ? inPageConnector(model)
      : createConnector({
          endpoint: params.get('endpoint') ?? 'http://127.0.0.1:8080',
          retry: { attempts: 1, baseDelayMs: 0 },
        }),
    settings: {
      toolMode: model ? 'prompted' : 'native',
      maxOutputTokens: Number(params.get('maxTokens') ?? 512),
    },
  });
  return {
    ...session,
    async send(...args) {
      const result = await session.send(...args);
      turns.push({ ...result, endedAt: performance.now() });
      return result;
    },
  };
}

const list = document.querySelector('sm-conversations')!;
const chat = document.querySelector('sm-chat')!;
const events = document.querySelector<HTMLPreElement>('#events')!;

const status: ChatStatus =
  params.get('status') === 'connecting'
    ? { state: 'connecting' }
    : scenario === 'offline' || params.get('status') === 'error'
      ? {
          state: 'error',
          message:
            'Nothing answers at http://localhost:5001. Start KoboldCPP (or your server), or fix the address in Settings.',
        }
      : {
          state: 'connected',
          kind: 'koboldcpp',
          model: 'Qwen2.5-7B-Instruct-Q4_K_M',
          contextSize: 8192,
          toolMode: 'native',
        };

list.conversations = scenario === 'none' ? [] : conversations;
chat.memory = fakeMemory;
chat.session =
  scenario === 'offline' ? undefined : scenario === 'live' ? liveSession() : fakeSession;
chat.status = status;
const startId =
  scenario === 'none' ? undefined : scenario === 'empty' || scenario === 'live' ? 1 : 3;
chat.conversationId = startId;
list.activeId = startId;

function log(line: string): void {
  events.textContent = `${line}\n${events.textContent ?? ''}`;
}

document.addEventListener('sm-select-path', (e) =>
  log(`sm-select-path ${JSON.stringify(e.detail)}`),
);
document.addEventListener('sm-open-settings', () => log('sm-open-settings'));
document.addEventListener('sm-new-conversation', () => {
  const id = Math.max(0, ...conversations.map((c) => c.id ?? 0)) + 1;
  conversations.unshift({ id, title: 'New chat', created: new Date(), modified: new Date() });
  list.conversations = [...conversations];
  list.activeId = chat.conversationId = id;
  log(`sm-new-conversation → ${id}`);
});
document.addEventListener('sm-switch-conversation', (e) => {
  list.activeId = chat.conversationId = e.detail.id;
  log(`sm-switch-conversation ${JSON.stringify(e.detail)}`);
});
document.addEventListener('sm-rename-conversation', (e) => {
  const c = conversations.find((x) => x.id === e.detail.id);
  if (c) c.title = e.detail.title;
  list.conversations = [...conversations];
  log(`sm-rename-conversation ${JSON.stringify(e.detail)}`);
});
document.addEventListener('sm-delete-conversation', (e) => {
  const at = conversations.findIndex((x) => x.id === e.detail.id);
  if (at >= 0) conversations.splice(at, 1);
  list.conversations = [...conversations];
  if (chat.conversationId === e.detail.id)
    list.activeId = chat.conversationId = conversations[0]?.id;
  log(`sm-delete-conversation ${JSON.stringify(e.detail)}`);
});

/** For scripted checks (Playwright): the elements and the event log. */
(window as unknown as { harness: unknown }).harness = {
  chat,
  list,
  events: () => (events.textContent ?? '').split('\n').filter(Boolean),
  renderMarkdown,
  turns,
  generations,
  /**
   * The text of the last block shown in the last assistant bubble, whitespace collapsed: cheap
   * at any length (blocks go in in order, so once the reply's end shows, all of it does).
   */
  lastShown: () => {
    const md = assistantBubbles().at(-1);
    let last = md?.lastElementChild;
    if (last?.classList.contains('chunk')) last = last.lastElementChild;
    return (last?.textContent ?? '').replace(/\s+/g, ' ').trim();
  },
  /** What a reader sees in the assistant bubbles (innerText: lays the page out), whitespace collapsed. */
  shownText: () =>
    assistantBubbles()
      .map((md) => md.innerText)
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim(),
};

function assistantBubbles(): HTMLElement[] {
  return [...(chat.shadowRoot?.querySelectorAll('sm-message[kind="assistant"]') ?? [])].flatMap(
    (m) => [...(m.shadowRoot?.querySelectorAll<HTMLElement>('.md') ?? [])],
  );
}
