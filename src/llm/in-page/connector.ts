// The "In this browser" kind behind the same Connector interface as the servers: llama.cpp in
// WebAssembly in its own worker (workers/in-page-model.worker.ts), started only when this kind is
// used, so the first visit loads none of it. Tools are native to the chat: they are described in
// the system prompt and the reply is sampled under a grammar that allows free text or one call
// whose arguments match its tool's schema (grammar.ts), read back as a tool call. Structured
// answers (the memory keeper) are constrained by llama.cpp's grammar from the JSON schema.
// docs/in-page-model.md.
import { proxy, releaseProxy, wrap, type Remote } from 'comlink';
import type { InPageModelApi } from '../../../workers/in-page-model.worker';
import { estimateTokens } from '../../memory/text';
import { readGgufHeader } from '../gguf';
import { describeTools, toPromptedMessages } from '../prompted-tools';
import { makeCallId } from '../tool-calls';
import type {
  ChatRequest,
  Connector,
  GenerateRequest,
  StructuredRequest,
  StructuredResult,
  ToolProbe,
} from '../connector';
import {
  LlmError,
  type ChatMessage,
  type GenerationResult,
  type ServerInfo,
  type ToolSpec,
} from '../types';
import { CALL_OPEN, parseGrammarCall, toolGrammar } from './grammar';
import type {
  InPageChatMessage,
  InPageChatRequest,
  InPageLoadProgress,
  InPageModelInfo,
} from './types';

export interface InPageConnectorOptions {
  /** The model's name as shown (its file name). */
  name: string;
  /** The GGUF file, or its parts in order for a split model; read when the model first loads. */
  files: () => Promise<Blob[]>;
  /** Context size wanted (0: the model's own, up to MAX_CONTEXT). */
  contextSize?: number;
  /** Told what was loaded (threads, context, time). */
  onLoaded?: (info: InPageModelInfo) => void;
  /** Told how a load is going: another tab has the model, bytes read, setting up. */
  onProgress?: (progress: InPageLoadProgress) => void;
}

/** This build carries the engine (the portable file does not: vite.portable.config.ts). */
export const IN_PAGE_AVAILABLE = true;

/** A CPU in a browser tab: a longer context costs memory and slows every reply. */
export const MAX_CONTEXT = 8192;

/** The worker, started on first use; one per connector. */
function startWorker(): { model: Remote<InPageModelApi>; stop(): void } {
  const worker = new Worker(new URL('../../../workers/in-page-model.worker.ts', import.meta.url), {
    type: 'module',
    name: 'in-page-model',
  });
  const model = wrap<InPageModelApi>(worker);
  return {
    model,
    stop() {
      model[releaseProxy]();
      worker.terminate();
    },
  };
}

/**
 * A chat with tools as the model reads it: the tools described in the system prompt, earlier
 * calls as `<tool_call>` blocks and their results as `<tool_response>` blocks (the form the
 * grammar makes it write).
 */
function withTools(messages: ChatMessage[], tools: ToolSpec[]): ChatMessage[] {
  const out = toPromptedMessages(messages);
  const about = describeTools(tools);
  const first = out[0];
  if (first?.role === 'system') first.content = `${first.content ?? ''}\n\n${about}`;
  else out.unshift({ role: 'system', content: about });
  return out;
}

/** Chat messages as the model's template takes them: tool results become user turns. */
function toTemplateMessages(messages: ChatMessage[]): InPageChatMessage[] {
  return messages.map((m) => ({
    role: m.role === 'tool' ? 'user' : m.role,
    content:
      m.role === 'tool'
        ? `Tool result (${m.name ?? 'tool'}): ${m.content ?? ''}`
        : (m.content ?? ''),
  }));
}

export type InPageConnector = Connector & {
  /** Ends the worker (and frees the model's memory). */
  close(): void;
  /** A load waiting for another tab that has the model open loads a copy here too. */
  useHere(): void;
};

export function createInPageConnector(options: InPageConnectorOptions): InPageConnector {
  const baseUrl = `in-page:${options.name}`;
  let worker: ReturnType<typeof startWorker> | undefined;
  let loaded: Promise<ServerInfo> | undefined;
  /** Set by close(): no engine starts again for this connector (a new one replaced it). */
  let closed = false;
  let markClosed = () => {};
  /**
   * Rejects at close(): a call to an ended worker never answers, so every wait on the engine
   * races this one (a load or reply in progress ends with a sentence, not a hang).
   */
  const whenClosed = new Promise<never>((_, reject) => {
    markClosed = () => reject(closedError());
  });
  whenClosed.catch(() => {});

  /** The sentence for a request that reaches this connector after close(). */
  function closedError(): LlmError {
    return new LlmError(
      'DISCONNECTED',
      'The model in this browser was closed (its settings changed): send the message again.',
      { kind: 'inpage' },
    );
  }

  /** `call` to the engine, or the closed sentence if close() comes first. */
  function engineCall<T>(call: Promise<T>): Promise<T> {
    return Promise.race([call, whenClosed]);
  }

  function load(): Promise<ServerInfo> {
    if (closed) return Promise.reject(closedError());
    loaded ??= (async () => {
      // The file first: no engine starts for a model that is not there.
      const files = await options.files();
      // Closed while the file was read: starting an engine now would leave it running, with the
      // model's memory, and nothing to end it.
      if (closed) throw closedError();
      worker ??= startWorker();
      const wanted = options.contextSize && options.contextSize > 0 ? options.contextSize : 0;
      // Never more than the model was trained for, nor than a tab's CPU and memory suit.
      const trained = await trainedContext(files[0]);
      if (closed || !worker) throw closedError();
      const onProgress = options.onProgress;
      const info = await engineCall(
        worker.model.load(
          files,
          {
            context: Math.min(wanted || MAX_CONTEXT, trained || MAX_CONTEXT, MAX_CONTEXT),
            oneCopy: true,
          },
          onProgress ? proxy((p: InPageLoadProgress) => onProgress(p)) : undefined,
        ),
      );
      options.onLoaded?.(info);
      return {
        kind: 'inpage' as const,
        baseUrl,
        model: options.name,
        contextSize: info.context,
        tokenizer: false,
      };
    })();
    loaded.catch(() => (loaded = undefined));
    return loaded;
  }

  async function run(
    request: InPageChatRequest,
    signal: AbortSignal | undefined,
    onToken?: (text: string) => void,
  ): Promise<GenerationResult> {
    await load();
    if (!worker) throw closedError();
    const model = worker.model;
    if (signal?.aborted) return { text: '', toolCalls: [], finishReason: null, aborted: true };
    let text = '';
    const onAbort = () => void model.stop();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const done = await engineCall(
        model.chat(
          request,
          proxy((piece: string) => {
            text += piece;
            onToken?.(piece);
          }),
        ),
      );
      const aborted = done.finish === 'aborted';
      return { text, toolCalls: [], finishReason: aborted ? null : done.finish, aborted };
    } catch (e) {
      // The engine may be broken now (its file deleted while loaded, out of memory): the next
      // request starts it again, and says so if the file is gone.
      worker?.stop();
      worker = undefined;
      loaded = undefined;
      const gone = await options.files().then(
        () => undefined,
        (why: unknown) => why,
      );
      if (gone instanceof LlmError) throw gone;
      if (closed) throw closedError();
      throw new LlmError('SERVER_ERROR', `The model in this browser failed: ${errorText(e)}`, {
        kind: 'inpage',
        partial: text,
      });
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  return {
    baseUrl,
    detect: () => load(),
    async chat(req: ChatRequest): Promise<GenerationResult> {
      const tools = req.tools ?? [];
      if (!tools.length) {
        return run(
          {
            messages: toTemplateMessages(req.messages),
            maxTokens: req.maxTokens,
            temperature: req.temperature,
            stop: req.stop,
          },
          req.signal,
          req.onToken,
        );
      }
      // Text cannot start with `<` under the grammar: a reply that does is a call, and a call
      // is not shown as it is written (the chat shows its card).
      let call = false;
      let first = true;
      const result = await run(
        {
          messages: toTemplateMessages(withTools(req.messages, tools)),
          maxTokens: req.maxTokens,
          temperature: req.temperature,
          stop: req.stop,
          grammar: toolGrammar(tools),
        },
        req.signal,
        (piece) => {
          if (first && piece.trimStart()) {
            first = false;
            call = piece.trimStart().startsWith(CALL_OPEN[0]!);
          }
          if (!call) req.onToken?.(piece);
        },
      );
      const parsed = result.aborted ? null : parseGrammarCall(result.text, makeCallId);
      // A call cut short by the token limit goes back as text: the chat tells the model it could
      // not be read. One stopped halfway is not shown.
      if (!parsed) return call && result.aborted ? { ...result, text: '' } : result;
      return { ...result, text: '', toolCalls: [parsed], finishReason: 'tool_calls' };
    },
    async generate(_req: GenerateRequest): Promise<GenerationResult> {
      throw new LlmError('BAD_REQUEST', 'Only KoboldCPP takes a native generation.', {
        kind: 'inpage',
      });
    },
    async structured(req: StructuredRequest): Promise<StructuredResult> {
      const constrained = (req.mode ?? 'constrained') === 'constrained';
      const result = await run(
        {
          messages: toTemplateMessages(req.messages),
          maxTokens: req.maxTokens,
          temperature: req.temperature,
          ...(constrained ? { jsonSchema: req.schema } : {}),
        },
        req.signal,
      );
      return {
        text: result.aborted ? '' : result.text,
        constrained,
        finishReason: result.finishReason,
        aborted: result.aborted,
      };
    },
    async countTokens(text: string): Promise<number> {
      return estimateTokens(text);
    },
    async probeTools(): Promise<ToolProbe> {
      return { native: true };
    },
    close() {
      closed = true;
      markClosed();
      worker?.stop();
      worker = undefined;
      loaded = undefined;
    },
    useHere() {
      void worker?.model.useHere();
    },
  };
}

/** The GGUF's `<architecture>.context_length` (0 when the header does not say). */
async function trainedContext(file: Blob | undefined): Promise<number> {
  if (!file) return 0;
  try {
    const header = readGgufHeader(
      new Uint8Array(await file.slice(0, Math.min(file.size, 16 * 1024 * 1024)).arrayBuffer()),
    );
    const value = header.metadata.get(
      `${String(header.metadata.get('general.architecture'))}.context_length`,
    );
    return typeof value === 'number' ? value : 0;
  } catch {
    return 0; // the engine reads the file itself and says what is wrong
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
