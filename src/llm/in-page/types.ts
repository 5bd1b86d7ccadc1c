// Shapes that cross the boundary to the in-page model's worker (workers/in-page-model.worker.ts).

export interface InPageLoadOptions {
  /** Context size asked for (tokens); the model's own limit and the device bound it. */
  context: number;
  /**
   * One copy per browser: wait while another tab of the app has the model loaded (until it lets
   * go, or `useHere`), and hold a Web Lock that says so while loaded here.
   */
  oneCopy?: boolean;
  /**
   * Threads to run on (one without cross-origin isolation, whatever is asked). By default as many
   * as suit this device. One thread makes a seeded generation repeat exactly.
   */
  threads?: number;
}

/** How a load is going. */
export type InPageLoadProgress =
  /** Another tab has the model loaded; this load waits for it (or `useHere`). */
  | { phase: 'other-tab'; total: number }
  /** The file is being read into the engine: `done` of `total` bytes. */
  | { phase: 'reading'; done: number; total: number }
  /** All read; the engine sets the model up (context, threads). */
  | { phase: 'starting' };

export interface InPageModelInfo {
  /** Threads llama.cpp runs on (1 without cross-origin isolation). */
  threads: number;
  multithreaded: boolean;
  /** Context size in use (tokens). */
  context: number;
  /** Context size the model was trained with (`<arch>.context_length`). */
  contextTrained: number;
  /** `tokenizer.chat_template`, or null when the file has none. */
  chatTemplate: string | null;
  architecture: string;
  name: string;
  loadMs: number;
}

export interface InPageChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface InPageChatRequest {
  messages: InPageChatMessage[];
  maxTokens: number;
  temperature?: number;
  seed?: number;
  /** A llama.cpp GBNF grammar the reply must follow. */
  grammar?: string;
  /** A JSON schema the reply must match (llama.cpp turns it into a grammar). */
  jsonSchema?: Record<string, unknown>;
  /** Generation ends before any of these strings. */
  stop?: string[];
}
