// The stored conversation as the model reads it: messages in the OpenAI form (notices and memory
// keeper cards left out, every stored call's arguments as JSON the server accepts), and the
// memories read with queryMemory in earlier turns, which ride along in the prompt.
import { saidText } from '../memory/text';
import type { ChatMessage } from '../llm/types';
import { isKeeperCard } from '../memory/replies';
import type { Message } from '../memory/types';
import type { InjectedMemory } from './context';

/**
 * A stored message the model never reads: a notice to the person, or a memory keeper's card.
 * `toChatMessages` and `historyIds` both go by it, so their lists stay aligned.
 */
export function isAside(m: Pick<Message, 'meta'>): boolean {
  return !!m.meta?.notice || isKeeperCard(m);
}

/** Stored messages → OpenAI-form history (asides left out: `isAside`). */
export function toChatMessages(messages: readonly Message[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (isAside(m)) continue;
    if (m.role === 'tool') {
      out.push({
        role: 'tool',
        content: m.text,
        tool_call_id: m.toolCallId ?? '',
        name: String(m.meta?.name ?? ''),
      });
    } else if (m.role === 'assistant' && m.toolCalls?.length) {
      out.push({
        role: 'assistant',
        content: saidText(m.role, m.text) || null,
        tool_calls: m.toolCalls.map((c) => ({
          id: c.id,
          type: 'function' as const,
          function: { name: c.name, arguments: argumentsJson(c.arguments) },
        })),
      });
    } else {
      // An earlier reply's thinking is not sent back (its answer is what was said).
      out.push({ role: m.role, content: saidText(m.role, m.text) });
    }
  }
  return out;
}

/** The message id of each message `toChatMessages` keeps, in its order. */
export function historyIds(messages: readonly Message[]): (number | undefined)[] {
  return messages.filter((m) => !isAside(m)).map((m) => m.id);
}

/**
 * A stored call's arguments as the JSON text the wire wants. A call the model wrote as text that
 * is not JSON is kept as it was but sent wrapped in an object: llama-server parses the arguments
 * of every call in the history and refuses the whole request when one is not JSON
 * (docs/chat.md, "Unreadable tool calls and a round's write"), so one bad call would fail every later turn.
 */
export function argumentsJson(args: unknown): string {
  if (typeof args !== 'string') return JSON.stringify(args ?? {});
  try {
    JSON.parse(args);
    return args;
  } catch {
    return JSON.stringify({ unparsed_arguments: args });
  }
}

/** queryMemory results from earlier turns (newest last, at most 2): they ride along in the prompt. */
export function injectedBefore(
  messages: readonly Message[],
  currentUserId: number | undefined,
): InjectedMemory[] {
  const found: InjectedMemory[] = [];
  for (const m of messages) {
    if (currentUserId !== undefined && m.id! >= currentUserId) break;
    for (const c of m.toolCalls ?? []) {
      const r = c.result as
        | { status?: unknown; path?: unknown; content?: unknown; contextChunks?: unknown }
        | undefined;
      if (c.name === 'queryMemory' && r?.status === 'SUCCESS' && typeof r.path === 'string') {
        found.push({
          path: r.path,
          content: (r.content ?? null) as InjectedMemory['content'],
          chunks: Array.isArray(r.contextChunks)
            ? (r.contextChunks as InjectedMemory['chunks'])
            : [],
        });
      }
    }
  }
  return found.slice(-2);
}
