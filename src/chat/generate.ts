// One model call in the turn's tool mode, and the tool calls read out of its reply. Native calls
// come in the response; prompted ones (`<tool_call>` text, Mistral's `[TOOL_CALLS]`, bare JSON)
// are parsed from the text. A block marked as a call that cannot be read is kept as a call with
// the reason, so the model is told and can write it again.
import {
  mayHavePythonicCall,
  parseToolCalls,
  PROMPTED_STOP,
  toolNameKey,
  toPromptedMessages,
} from '../llm/prompted-tools';
import { makeCallId } from '../llm/tool-calls';
import { tokenFilter } from '../llm/token-filter';
import type { ChatMessage, GenerationResult, LlmError, ServerInfo, ToolCall } from '../llm/types';
import { oneUserInARow } from './context';
import { toolNamed } from './tools';
import type { Turn } from './turn';

/** A model's reply, read for tool calls. */
export interface Reply {
  result: GenerationResult;
  calls: ToolCall[];
  /** The reply's words, without its calls. */
  visible: string;
  /** The text could not be searched for calls (too long, say) and none was run. */
  parseError?: LlmError;
  /** Calls that could not be read (among `calls`), by id: why not. */
  unreadable: Map<string, string>;
}

/**
 * Text that may hold a tool call in a form parseToolCalls reads: a `<tool_call>` tag, Mistral's
 * `[TOOL_CALLS]`, or JSON with an `arguments` / `parameters` key; or a tool's name followed by
 * `(`, a call written in Python (`mayHavePythonicCall`). Text without one has none.
 */
export const CALL_MARKS = /<tool_call>|\[TOOL_CALLS\]|"(?:arguments|parameters)"\s*:/;

/** One model call in the chosen mode; its tokens go to the UI as they arrive. */
export async function generate(
  turn: Turn,
  s: ServerInfo,
  mode: 'native' | 'prompted',
  messages: ChatMessage[],
): Promise<Reply> {
  const { connector, specs, tools } = turn.ctx;
  const common = callOptions(turn, mode, (t) => {
    turn.streamed += t;
    turn.emit({ type: 'token', text: t });
  });
  let result: GenerationResult;
  if (mode === 'native') {
    result = await connector.chat({ ...common, messages: oneUserInARow(messages), tools: specs });
  } else {
    const prompted = oneUserInARow(toPromptedMessages(messages));
    result =
      s.kind === 'koboldcpp'
        ? await connector.generate({
            ...common,
            prompt: koboldPrompt(prompted),
            stop: [...PROMPTED_STOP, '{{[INPUT]}}'],
          })
        : await connector.chat({ ...common, messages: prompted, stop: [...PROMPTED_STOP] });
  }
  const unreadable = new Map<string, string>();
  if (result.aborted) return { result, calls: [], visible: result.text, unreadable };
  // Either way, take calls in whichever form the model produced them: some models write
  // <tool_call> text even when native tools were offered, and some servers parse text calls
  // into native ones even when none were offered.
  // Only text with a call's marks is searched: a long plain answer costs no parse (and a reply
  // too long to search is reported only when it may have held a call).
  // Calls written in Python are looked for only where the model was asked to write calls as
  // text: with native tools, a line that calls a tool in Python is an answer's example.
  const names = new Set(mode === 'prompted' ? tools.map((t) => toolNameKey(t.name)) : []);
  const parsed =
    CALL_MARKS.test(result.text) || mayHavePythonicCall(result.text, names)
      ? parseToolCalls(result.text, names)
      : { calls: [], text: result.text.trim(), invalid: [], marked: false, error: undefined };
  const named = parsed.calls.map((c) => withToolName(c, tools));
  // Natively, bare JSON is a call only when it names a tool (else it is an answer's JSON); a
  // block marked as a call is one whatever it names, and an unknown name gets an error result.
  const textCalls =
    mode === 'prompted' || parsed.marked
      ? named
      : named.filter((c) => toolNamed(tools, c.function.name));
  if (result.toolCalls.length) {
    const calls = result.toolCalls.map((c) => withToolName(c, tools));
    return { result, calls, visible: result.text.trim(), unreadable };
  }
  // A block marked as a call (`<tool_call>`, `[TOOL_CALLS]`) that cannot be read goes back to
  // the model as a failed call, so it can write it again.
  const broken = parsed.invalid.map((body) => {
    const call: ToolCall = {
      id: makeCallId(),
      type: 'function',
      function: { name: calledName(body), arguments: body },
    };
    unreadable.set(call.id, whyUnreadable(body));
    return call;
  });
  if (textCalls.length || broken.length) {
    return { result, calls: [...textCalls, ...broken], visible: parsed.text.trim(), unreadable };
  }
  // The text shows a call but was not searched (too long): say so.
  return {
    result,
    calls: [],
    visible: (mode === 'prompted' ? parsed.text : result.text).trim(),
    unreadable,
    ...(parsed.error ? { parseError: parsed.error } : {}),
  };
}

/**
 * What a turn's model call sends besides its prompt: the settings' limits, the turn's signal, and
 * the tokens to `onText` with the tool-call markup a `mode` reply may hold left out.
 */
export function callOptions(
  turn: Turn,
  mode: 'native' | 'prompted',
  onText: (text: string) => void,
): { maxTokens: number; temperature: number; signal?: AbortSignal; onToken: (t: string) => void } {
  const { settings } = turn.ctx;
  return {
    maxTokens: settings.maxOutputTokens,
    temperature: settings.temperature,
    signal: turn.signal,
    onToken: tokenFilter(mode, onText),
  };
}

/** KoboldCPP native prompt with its instruct placeholders (replaced by the model's chat tags). */
export function koboldPrompt(messages: readonly ChatMessage[]): string {
  const tag = {
    system: '{{[SYSTEM]}}',
    user: '{{[INPUT]}}',
    assistant: '{{[OUTPUT]}}',
    tool: '{{[INPUT]}}',
  } as const;
  return (
    messages.map((m) => `${tag[m.role]}${koboldText(m.content ?? '')}`).join('') + '{{[OUTPUT]}}'
  );
}

/**
 * Text as it goes into a KoboldCPP prompt: KoboldCPP replaces every `{{[…]}}` placeholder in the
 * prompt by the model's chat tags, so one written in a message, a memory or a recalled turn would
 * start a turn of another speaker there. A zero-width space after the braces keeps it words.
 */
export function koboldText(text: string): string {
  return text.replace(/\{\{\[/g, '{{\u200B[');
}

/**
 * The call with the name of the tool it means (`save_memory` is saveMemory), so what is run,
 * stored and sent back names the tool as it is; an unknown name is kept, for its error result.
 */
function withToolName(call: ToolCall, tools: readonly { name: string }[]): ToolCall {
  const name = toolNamed(tools, call.function.name)?.name;
  if (name === undefined || name === call.function.name) return call;
  return { ...call, function: { ...call.function, name } };
}

/** The tool an unreadable call names, if it names one; else a placeholder a server accepts. */
function calledName(body: string): string {
  const named =
    /"name"\s*:\s*"([A-Za-z_][\w.-]{0,63})"/.exec(body) ??
    /^\[TOOL_CALLS\]\s*([A-Za-z_][\w.-]{0,63})/.exec(body);
  return named?.[1] ?? 'unreadable_tool_call';
}

/** Why a block marked as a tool call could not be read, for the model. */
export function whyUnreadable(body: string): string {
  const inner = body
    .replace(/^\[TOOL_CALLS\]\s*/, '')
    .replace(/^[A-Za-z_][\w.-]*\s*(?:\[CALL_ID\]\s*[\w-]+\s*)?\[ARGS\]\s*/, '')
    .replace(/^```[\w-]*\s*|\s*```$/g, '')
    .trim();
  if (!inner) return 'it is empty';
  try {
    JSON.parse(inner);
    return 'it is not a tool name with arguments';
  } catch (e) {
    return `its JSON is not valid (${e instanceof Error ? e.message : String(e)})`;
  }
}
