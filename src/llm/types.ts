// Wire-neutral types of the LLM connector: server facts, chat messages, tool calls, stream events
// and typed errors (PROTOCOLS.md).

export type ServerKind = 'koboldcpp' | 'llamacpp' | 'ollama' | 'lmstudio' | 'openai' | 'inpage';

/** What detection learned about the server behind the endpoint. */
export interface ServerInfo {
  kind: ServerKind;
  /** Normalised endpoint, no trailing slash (e.g. `http://localhost:5001`). */
  baseUrl: string;
  /** Model name as the server reports it ('' when unknown). */
  model: string;
  /** Context size in tokens (server's, else the setting, else 4096). */
  contextSize: number;
  /** Server version string when known. */
  version?: string;
  /** The server has a tokenizer endpoint (`/api/extra/tokencount`, `/tokenize`). */
  tokenizer: boolean;
}

export type ToolMode = 'auto' | 'native' | 'prompted';

/** An OpenAI-style tool call (arguments as the raw JSON string the model wrote). */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A chat message in OpenAI form; also the form prompts are assembled in. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** Tool name, for prompted mode and for servers that want it on tool results. */
  name?: string;
}

/** A tool as sent to the model (OpenAI `tools` entry). */
export interface ToolSpec {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** One parsed server-sent event. */
export interface SseEvent {
  event?: string;
  data: string;
  id?: string;
}

/** What a streamed generation produced. */
export interface GenerationResult {
  text: string;
  toolCalls: ToolCall[];
  /** As the server said it (`stop`, `length`, `tool_calls`, …); null when it never said. */
  finishReason: string | null;
  /** The generation was stopped by the caller; `text` holds the partial answer. */
  aborted: boolean;
}

export type LlmErrorCode =
  | 'SERVER_DOWN'
  | 'CORS'
  | 'UNAUTHORIZED'
  | 'BUSY'
  | 'CONTEXT_OVERFLOW'
  | 'MALFORMED_STREAM'
  | 'DISCONNECTED'
  | 'TOOLS_UNSUPPORTED'
  | 'SCHEMA_UNSUPPORTED'
  | 'BAD_REQUEST'
  | 'NOT_FOUND'
  | 'SERVER_ERROR';

/** A connector failure with a `code` to branch on and a sentence for the user that says the fix. */
export class LlmError extends Error {
  override readonly name = 'LlmError';
  constructor(
    readonly code: LlmErrorCode,
    message: string,
    readonly detail: {
      status?: number;
      serverMessage?: string;
      kind?: ServerKind;
      /** Text streamed before the failure (a mid-stream disconnect). */
      partial?: string;
    } = {},
  ) {
    super(message);
  }
}
