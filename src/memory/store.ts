// One open memory, as every tool module gets it (`StoreContext`): the database, the clock, the
// embedding model (embedding-model.ts), the live indexes (live-indexes.ts), the context
// snapshot (snapshot.ts) and the tools' helpers (tool-helpers.ts), opened and closed together.
import type { Embedder, ModelInfo } from '../embeddings/types';
import { DEFAULT_DB_NAME, MemoryDB } from './db';
import { createModelAccess } from './embedding-model';
import { createLiveIndexes } from './live-indexes';
import { takeSnapshot } from './snapshot';
import { countSentenceTokens } from './token-count';
import { chunkView, entryText, guarded, historyRow, notFoundAt, pathArg } from './tool-helpers';
import type { NotFoundResult, OpenMemoryOptions, ToolError } from './types';

export type { Result } from './embedding-model';

export interface StoreState {
  /** Conversation of the latest recordTurn: the default for context snapshots. */
  lastConversationId: number | undefined;
  countTokens: ((text: string) => number | Promise<number>) | null;
  closed: boolean;
}

export type StoreContext = ReturnType<typeof openStore>;

export function openStore(options: OpenMemoryOptions) {
  const name = options.name ?? DEFAULT_DB_NAME;
  const embedder: Embedder = options.embedder;
  const now = options.now ?? Date.now;
  const db = new MemoryDB(name);
  const state: StoreState = { lastConversationId: undefined, countTokens: null, closed: false };
  const models = createModelAccess(embedder);
  const indexes = createLiveIndexes(name, db, models, options.vectorIndex, options.onIndexProgress);
  const { entries, chunksIndex } = indexes;

  function close(): void {
    if (state.closed) return;
    state.closed = true;
    indexes.stop();
    db.close();
  }

  return {
    db,
    now,
    embedder,
    state,
    model: models.model,
    embed: models.embed,
    entries,
    entryChanges: indexes.entryChanges,
    chunksIndex,
    guard: <T>(body: () => Promise<T>): Promise<T | ToolError> => guarded(() => state.closed, body),
    pathArg,
    entryText,
    notFound: (path: string): Promise<NotFoundResult> => notFoundAt(entries, path),
    chunkView,
    historyRow,
    noteWrite: indexes.noteWrite,
    noteChunkWrite: indexes.noteChunkWrite,
    /** Token counts of sentences, a few requests to the server's tokenizer for all of them. */
    tokensOfSentences: (sentences: readonly string[]): Promise<number[]> =>
      countSentenceTokens(sentences, state.countTokens),
    snapshot: (
      info: ModelInfo,
      conversationId: number | undefined,
      query: { text: string; vector: Float32Array },
      budget: number,
      upTo?: number,
    ) => takeSnapshot({ db, chunksIndex }, info, conversationId, query, budget, upTo),
    close,
  };
}
