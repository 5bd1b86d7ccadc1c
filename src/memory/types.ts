// Row types of the database and result shapes of the memory tools (docs/design.md, "Data model"
// and "The tools").

/** Any JSON value: what `saveMemory` accepts as content. */
export type JsonValue =
  string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type Role = 'user' | 'assistant' | 'system' | 'tool';

/** A chunk of conversation copied into an entry when it is saved. */
export interface ContextChunk {
  turn_id: number;
  sentence_id: number;
  role: Role;
  text: string;
  embedding: Float32Array;
  similarity: number;
  tokenCount: number;
}

/** A row of `structured_memory`. */
export interface MemoryEntry {
  id?: number;
  path: string;
  heading: string;
  parent_path: string;
  content: JsonValue;
  contextChunks: ContextChunk[];
  embedding: Float32Array;
  model: string;
  created: Date;
  modified: Date;
  accessed: Date;
  version: number;
  /** The path it had before its latest move (absent if it was never moved). */
  movedFrom?: string;
  /**
   * The version whose save took `contextChunks`, when a later change kept them (an edit by hand,
   * a merge patch, a move, a restore); absent when this version's own save took them.
   */
  contextVersion?: number;
}

export interface Conversation {
  id?: number;
  title: string;
  created: Date;
  modified: Date;
  /** Renamed by the user: the first message no longer names it (docs/chat.md). */
  named?: boolean;
  /**
   * When the person last renamed it: another device's change of the chat (a message, which moves
   * `modified` on) does not take a later rename back (docs/sync.md, "Conflicts lose nothing").
   */
  titled?: Date;
  /**
   * Imported from another tool's chat file: the file's SHA-256 (hex), so that importing it again
   * adds nothing (docs/import-export.md).
   */
  source?: string;
}

export interface ToolCallRecord {
  id: string;
  name: string;
  arguments: unknown;
  result?: unknown;
}

/** A turn (message) of a conversation. Turn ids are numbers (IndexedDB keys cannot be BigInt). */
export interface Message {
  id?: number;
  conversationId: number;
  role: Role;
  text: string;
  toolCalls?: ToolCallRecord[];
  toolCallId?: string;
  time: Date;
  /** Extra flags, e.g. `{ aborted: true }` for a partial answer. */
  meta?: Record<string, unknown>;
}

/** A sentence of the semantic index. */
export interface Chunk {
  id?: number;
  conversationId: number;
  turnId: number;
  sentenceId: number;
  role: Role;
  text: string;
  tokenCount: number;
  embedding: Float32Array;
  model: string;
  time: Date;
}

/** An overwritten or deleted version of an entry, restorable. */
export interface HistoryRow {
  id?: number;
  path: string;
  version: number;
  /** Why this version left the live table. */
  reason: 'update' | 'delete' | 'move' | 'restore' | 'import';
  /** When it left. */
  replaced: Date;
  entry: Omit<MemoryEntry, 'id'>;
  /** With reason 'move': the path the entry went to (absent in rows written before it existed). */
  movedTo?: string;
  /**
   * With reason 'delete': the path the delete named, i.e. the root of a recursive delete, so the
   * rows of one delete list and restore together (docs/trash.md).
   */
  deleteRoot?: string;
  /**
   * Set on a version that lost a sync conflict (docs/sync.md): the device it came from. The
   * version that won is the live entry; this one stays restorable.
   */
  conflictFrom?: string;
}

export interface SettingRow {
  key: string;
  value: unknown;
}

export type ErrorCode =
  | 'INVALID_PATH'
  | 'INVALID_CONTENT'
  | 'CONTENT_TOO_LARGE'
  | 'INVALID_ARGUMENT'
  | 'NOT_FOUND'
  | 'HAS_CHILDREN'
  /** A save that named the version it expected found another (`SaveOptions.expectedVersion`). */
  | 'CHANGED'
  | 'STORAGE_FULL'
  | 'MODEL_UNAVAILABLE'
  /** Not expected: a bug or a broken database. The message says what happened. */
  | 'INTERNAL_ERROR';

export interface ToolError {
  status: 'ERROR';
  code: ErrorCode;
  message: string;
}

export interface NotFoundResult {
  status: 'NOT_FOUND';
  path: string;
  message: string;
  /** Set when the path is a heading: how many direct children it has. */
  children?: number;
  isHeading?: boolean;
}

export interface SaveResult {
  status: 'SUCCESS';
  path: string;
  version: number;
  contextTokens: number;
  chunksStored: number;
  /** The entry held this content already: nothing was written, `version` is the one it has. */
  unchanged?: true;
}

/** Where "Remember this" proposes to save a text (`suggestMemoryPath`). */
export interface SuggestResult {
  status: 'SUCCESS';
  /** A free path: `<heading>/<a short name from the text>`, numbered past existing ones. */
  path: string;
  heading: string;
  /** `match`: the heading's entries match the text; `default`: none did, so `Notes`. */
  basis: 'match' | 'default';
}

/** A chunk as the model sees it: no vectors. */
export interface ChunkView {
  role: Role;
  text: string;
  similarity: number;
  /** In search results: the chunk's fused relevance to the query, 0..1. */
  relevance?: number;
}

/** Why a search hit matched (docs/search.md). */
export interface MatchReason {
  /** Query words found, in index form (lower case, stemmed): the UI highlights their forms. */
  terms: string[];
  /**
   * The fused relevance on its own scale, 0..1 (thresholds such as MIN_RELEVANCE use it);
   * `relevance` is this relative to the search's best match.
   */
  match: number;
  /** Lexical relevance, 0..1 (the snapshot's words included). */
  lexical: number;
  /** Semantic relevance, 0..1 (the snapshot's chunks included); 0 without a model. */
  semantic: number;
  /** The context snapshot, not the entry's own words, carried the match. */
  fromSnapshot: boolean;
}

export interface QueryResult {
  status: 'SUCCESS';
  path: string;
  content: JsonValue;
  contextChunks: ChunkView[];
  metadata: { created: Date; modified: Date; accessed: Date; version: number };
}

export interface HeadingChildEntry {
  path: string;
  heading: string;
  content: JsonValue;
  modified: Date;
  /** Present when the entry also has children. */
  descendants?: number;
  /** With a query: (1 − recencyBias) × relevance + recencyBias × recency. */
  score?: number;
  /**
   * With a query: fused lexical and semantic relevance relative to the search's best match,
   * 0..1 (the best is 1 when it is relevant at all); `why.match` is the absolute one.
   */
  relevance?: number;
  /** With a query: the highest raw cosine of the entry or its snapshot. */
  similarity?: number;
  recency?: number;
  why?: MatchReason;
  relevantChunks?: ChunkView[];
}

export interface HeadingChildHeading {
  path: string;
  heading: string;
  isHeading: true;
  descendants: number;
  modified: Date;
  score?: number;
  relevance?: number;
  similarity?: number;
  recency?: number;
  why?: MatchReason;
  /** With a query: the best-scoring descendant entry. */
  bestMatch?: { path: string; heading: string; content: JsonValue; relevantChunks: ChunkView[] };
}

export type HeadingChild = HeadingChildEntry | HeadingChildHeading;

export interface HeadingResult {
  status: 'SUCCESS';
  path: string;
  query?: string;
  /** With a query: 'subtree' ranks every entry below the heading, 'children' its direct children. */
  scope?: HeadingScope;
  /** With a query: the signals used ('lexical' alone when no embedding model could load). */
  signals?: 'both' | 'lexical' | 'semantic';
  /** With a query and scope 'subtree': the ranked entries; otherwise the direct children. */
  children: HeadingChild[];
  /** Direct children of the heading. */
  totalChildren: number;
  /** With a query: entries that matched at all (before `limit`). */
  matched?: number;
}

export type HeadingScope = 'subtree' | 'children';

export type TreeNode = { [segment: string]: JsonValue | TreeNode };

export interface ListResult {
  status: 'SUCCESS';
  path: string;
  tree: TreeNode;
  totalEntries: number;
  truncated?: boolean;
  /** With `truncated`: entries left out of `tree` entirely. */
  omittedEntries?: number;
}

export interface DeleteResult {
  status: 'SUCCESS';
  path: string;
  deleted: number;
  /** The trash item this delete made: `restoreDeleted(trashId)` undoes it. */
  trashId?: number;
}

export interface MoveResult {
  status: 'SUCCESS';
  from: string;
  to: string;
  moved: number;
}

export interface HistoryResult {
  status: 'SUCCESS';
  path: string;
  versions: {
    id: number;
    version: number;
    reason: HistoryRow['reason'];
    replaced: Date;
    content: JsonValue;
    modified: Date;
    /** With reason 'move': where the entry went. */
    movedTo?: string;
    /** A version that lost a sync conflict: the device it came from (docs/sync.md). */
    conflictFrom?: string;
  }[];
}

/** `restoreMemory`'s result. */
export interface RestoreResult extends SaveResult {
  /** The history id of the version the restore replaced (absent when the path was empty). */
  previousId?: number;
}

/** A deleted entry, or a subtree deleted at once, as the trash lists it. */
export interface TrashItem {
  /** Pass to `restoreDeleted`: one of the item's history rows. */
  id: number;
  /** The path the delete named: the entry, or the root of the deleted subtree. */
  path: string;
  /** When it was deleted. */
  deleted: Date;
  /** Entries in it that are still deleted. */
  entries: number;
  /** Their paths, sorted (at most TRASH_PATHS_LISTED; `entries` counts them all). */
  paths: string[];
  /** Content of the entry at `path`, else of the first entry: for a preview. */
  content: JsonValue;
  /** Context chunks stored with its entries, in all. */
  chunks: number;
}

export interface TrashResult {
  status: 'SUCCESS';
  /** Newest first. */
  items: TrashItem[];
}

export interface RestoreDeletedResult {
  status: 'SUCCESS';
  /** The item's path (the subtree's root). */
  path: string;
  restored: number;
  /** The entries now live again, sorted. */
  paths: string[];
}

export interface EmptyTrashResult {
  status: 'SUCCESS';
  /** Trash items removed. */
  items: number;
  /** Entries in them. */
  entries: number;
  /** History rows removed (every stored version of those paths). */
  versions: number;
}

/** What the explorer shows for one path (`entryDetail`), read in one call. */
export interface EntryDetail {
  status: 'SUCCESS';
  path: string;
  /** An entry is saved there; only a heading over entries below; nothing (any more). */
  kind: 'entry' | 'heading' | 'missing';
  /** The entry, with `kind: 'entry'`. */
  entry?: EntryView;
  /** Conversation id of each context chunk's source message (by its turn id), where it exists. */
  sources?: Record<number, number>;
  /** The path's earlier versions, newest first. */
  history: HistoryResult['versions'];
  /** Paths of the entries below, sorted. */
  below: string[];
  /** The first children (entries and headings) of a path with entries below. */
  children: HeadingChild[];
  totalChildren: number;
  /** With `kind: 'missing'`: where its moves led. */
  moved?: { to: string; live: boolean };
}

export interface ResolveResult {
  status: 'SUCCESS';
  /** Where the path's entry is now: the path itself, or where its moves led. */
  path: string;
  /** Something is saved at or below `path`. */
  live: boolean;
  /** The paths the moves went through, in order (empty when it was not moved). */
  moves: string[];
}

export interface ImportResult {
  status: 'SUCCESS';
  imported: number;
  created: number;
  updated: number;
  /** Entries whose path held their content already: nothing written for them. */
  unchanged?: number;
  /** A JSON backup's chats that were here already (merged before), so not added again. */
  chatsAlreadyHere?: number;
  /** A JSON backup's chats written (merged: an empty chat nobody named is left out). */
  chatsAdded?: number;
  /** A JSON backup's messages written. */
  messagesAdded?: number;
}

/** `importFile`'s report (docs/import-export.md). */
export interface FileImportResult {
  status: 'SUCCESS';
  /** What the file was. */
  kind: 'sillytavern-chat' | 'lorebook' | 'character' | 'kobold';
  /** The chat file was imported before: nothing was added. */
  duplicate?: boolean;
  /** The chats written: their id, title and how many messages they hold. */
  chats: { id: number; title: string; messages: number }[];
  /** Paths of the entries written. */
  entries: string[];
  /** Entries that were stored already with the same content, so not written again. */
  unchanged: number;
  /** Lines or items left out, each with why. */
  skipped: { where: string; reason: string }[];
}

export interface RecordTurnResult {
  status: 'SUCCESS';
  turnId: number;
  chunks: number;
  /** Characters past MAX_INDEXED_TURN_CHARS that were stored but not indexed (absent: none). */
  unindexedChars?: number;
}

export interface ChunkHit {
  chunk: Omit<Chunk, 'embedding'>;
  /** Raw cosine to the query (0 when only the words matched and the vector was not read). */
  similarity: number;
  /** Fused relevance relative to the search's best match, 0..1 (the blend's). */
  relevance: number;
  /** Fused relevance on its own scale, 0..1. */
  match: number;
  score: number;
  /** Query words found in the chunk, in index form. */
  terms: string[];
  /**
   * False when the search ran while a cold start was still reading the vectors: its candidates
   * came from the sign codes, so a better match may have been missed (cosines are exact).
   */
  exact: boolean;
}

/** A node of the memory outline: a heading or entry with the number of entries at or below it. */
export interface OutlineNode {
  path: string;
  entries: number;
  children?: OutlineNode[];
}

/** An auto-recall hit: a saved entry or a past turn (docs/search.md, "Recall"). */
export type RecallHit = EntryRecallHit | TurnRecallHit;

export interface EntryRecallHit {
  kind: 'entry';
  path: string;
  content: JsonValue;
  /** Fused lexical and semantic relevance, 0..1 (auto-recall ranks by relevance alone). */
  relevance: number;
  why: MatchReason;
  /**
   * The turns (message ids) it was saved from, its snapshot's two newest (the exchange that led
   * to the save): recall does not repeat them beside it.
   */
  turnIds: number[];
}

export interface TurnRecallHit {
  kind: 'turn';
  conversationId: number;
  /** The message id (`recordTurn`'s `turnId`). */
  turnId: number;
  role: Role;
  /** Who said it, where the chat names them (`meta.speaker`: an imported chat's characters). */
  speaker?: string;
  /** The message's whole text. */
  text: string;
  /** Its sentence that matched best (the whole text when it has one sentence). */
  best: string;
  /** When it was said. */
  time: Date;
  /** The chat's title. */
  chat: string;
  /** Fused relevance on the entries' scale, 0..1: the best of its sentences'. */
  relevance: number;
  /** Query words found in the turn, in index form. */
  terms: string[];
  /**
   * The turn this one replies to, where it was found as that turn's reply: that turn asks, and
   * a reply is found as its question is (its relevance, right after it; docs/search.md).
   */
  repliesTo?: number;
}

/** What `recallMemory` is asked besides the query and limit. */
export interface RecallOptions {
  /**
   * The floor of entries and turns (default MIN_RELEVANCE for an entry, TURN_MIN_RELEVANCE for a
   * turn: src/memory/ranking.ts).
   */
  minRelevance?: number;
  /** Past turns too (default true), or saved entries alone. */
  turns?: boolean;
  /**
   * Leaves out a chat's latest turns, from `fromTurnId` on (the ones the prompt holds
   * already, and the message being answered).
   */
  exclude?: { conversationId: number; fromTurnId: number };
}

/** searchConversations' answer: past turns that match, best first. */
export interface ConversationSearchResult {
  status: 'SUCCESS';
  query: string;
  results: {
    chat: string;
    conversationId: number;
    turnId: number;
    /** When it was said, ISO 8601. */
    date: string;
    /** Who said it: its name where the chat names speakers, else its role. */
    speaker: string;
    /** The message, or when it is long, its best sentence between ellipses. */
    text: string;
    relevance: number;
  }[];
}

/** What `prepareTurn` is asked for at the start of a chat turn. */
export interface TurnRequest {
  conversationId: number;
  /** A stored user message to index first (`recordTurn` with its id as `turnId`). */
  index?: { turnId: number; text: string };
  /** Auto-recall: `recallMemory(query, limit, options)`; none without it. */
  recall?: { query: string; limit: number; options?: RecallOptions };
  /** `memoryOutline(outlineDepth)`; none without it. */
  outlineDepth?: number;
}

/** What a chat turn builds its first prompt from, read in one call (`prepareTurn`). */
export interface TurnContext {
  /** The conversation's messages, oldest first (every alternative: the page picks). */
  messages: Message[];
  outline: OutlineNode[];
  /** Auto-recall hits, best first (empty when not asked for, or when recall failed). */
  recall: RecallHit[];
  /** How indexing the message went, when one was given. */
  indexed?: RecordTurnResult | ToolError;
}

/** An entry for the app's detail view: everything but the vectors. */
export interface EntryView {
  path: string;
  content: JsonValue;
  contextChunks: Omit<ContextChunk, 'embedding'>[];
  model: string;
  created: Date;
  modified: Date;
  accessed: Date;
  version: number;
  /** The path it had before its latest move. */
  movedFrom?: string;
  /** The version whose save took the context chunks, when a later change kept them. */
  contextVersion?: number;
}

/**
 * One entry as the explorer and the map see it, from the in-memory index (no row reads); the
 * index's own `EntryRef` (entry-index.ts) is this with where it keeps the vectors.
 */
export interface EntrySummary {
  path: string;
  version: number;
  /** ms since epoch */
  created: number;
  modified: number;
  accessed: number;
  /** Characters of the content as JSON. */
  size: number;
  /** Context chunks stored with it (of any model). */
  chunks: number;
}

/**
 * What a committed write changed, as the memory worker reports it to the page (docs/design.md,
 * "Change notifications"). `tables` names every table written; a table named there whose part
 * below is absent could not be described (a bulk write, a clear, an index rebuilt): views of it
 * load again in full.
 */
export interface MemoryChange {
  tables: string[];
  /** Entries by path: their summary now, or gone (a delete, or the old path of a move). */
  entries?: { upserted: EntrySummary[]; removed: string[] };
  /** Conversations by id: their list row now, or gone. */
  conversations?: { upserted: Conversation[]; removed: number[] };
  /** Messages written or deleted, by id. */
  messages?: { ids: number[] };
  /** Paths of the history rows written. */
  history?: { paths: string[] };
  /**
   * The detail the page shows (read by the worker's `entryDetail` with `watch`) when this change
   * touched it, read once the change was taken in: the page shows it without a read of its own.
   */
  details?: EntryDetail[];
}

/** Primary keys a write touched per table, or 'all' where Dexie reported a range. */
export type ChangedKeys = Partial<Record<string, number[] | 'all'>>;

export interface MemoryStats {
  entries: number;
  chunks: number;
  conversations: number;
  messages: number;
  /** Rows of a model other than the active one (waiting to be re-embedded). */
  stale: number;
}

export interface ReembedProgress {
  done: number;
  total: number;
}

export interface SaveOptions {
  /** Conversation whose chunks form the context snapshot; default: the latest `recordTurn`'s. */
  conversationId?: number;
  /**
   * The message the save is about (a person's "Remember this"): the snapshot's latest turns are
   * those up to and including it, not the conversation's last ones.
   */
  turnId?: number;
  /**
   * The version the caller read at the path (`null`: nothing saved there). The save is refused
   * with `CHANGED`, writing nothing, when the path now holds another version (or none, or one
   * where none was): a check and its write cannot be split by another writer (the memory keeper).
   */
  expectedVersion?: number | null;
}

export interface HeadingOptions {
  /** Most children returned (default 10). */
  limit?: number;
  /** With a query: search every entry below the heading (default) or rank its direct children. */
  scope?: HeadingScope;
  /** Signals to rank by (default both; one alone is for measurement). */
  signals?: 'both' | 'lexical' | 'semantic';
}

export interface ListOptions {
  /** Cap on the JSON size of the tree for the model (default 8,000 characters). */
  maxChars?: number;
}

/**
 * The memory engine: the five model tools plus the library extras (docs/design.md, "The tools"
 * and "Library API").
 * Every method resolves to a result object; none rejects on bad input.
 * Arguments are `unknown` on purpose: they come from a model and are validated here.
 */
export interface MemoryApi {
  saveMemory(
    path: unknown,
    content: unknown,
    contextTokens?: unknown,
    options?: SaveOptions,
  ): Promise<SaveResult | ToolError>;
  queryMemory(path: unknown): Promise<QueryResult | NotFoundResult | ToolError>;
  queryMemoryHeading(
    path: unknown,
    query?: unknown,
    recencyBias?: unknown,
    options?: HeadingOptions,
  ): Promise<HeadingResult | NotFoundResult | ToolError>;
  listMemory(
    rootPath?: unknown,
    options?: ListOptions,
  ): Promise<ListResult | NotFoundResult | ToolError>;
  deleteMemory(
    path: unknown,
    recursive?: unknown,
  ): Promise<DeleteResult | NotFoundResult | ToolError>;
  /** JSON merge patch (RFC 7396) of the content; a new version. */
  updateMemory(path: unknown, patch: unknown): Promise<SaveResult | NotFoundResult | ToolError>;
  /** Renames an entry or a whole subtree. `to` must not exist. */
  moveMemory(from: unknown, to: unknown): Promise<MoveResult | NotFoundResult | ToolError>;
  /** Earlier versions of a path (overwritten, moved away or deleted), newest first. */
  getHistory(path: unknown): Promise<HistoryResult | ToolError>;
  /** Makes a history version the live entry again (a new version). */
  restoreMemory(historyId: unknown): Promise<RestoreResult | NotFoundResult | ToolError>;
  /**
   * Replaces an entry's content by hand (the app's editor): a new version that keeps the context
   * snapshot of the save it edits, where `saveMemory` would take a new one.
   */
  editMemory(path: unknown, content: unknown): Promise<SaveResult | NotFoundResult | ToolError>;
  /** Deleted entries and subtrees whose paths are not live again, newest first (docs/trash.md). */
  listTrash(): Promise<TrashResult | ToolError>;
  /** Brings a trash item back whole (every entry still deleted in it), in one transaction. */
  restoreDeleted(trashId: unknown): Promise<RestoreDeletedResult | NotFoundResult | ToolError>;
  /** Removes every stored version of the paths in the trash, in one transaction. */
  emptyTrash(): Promise<EmptyTrashResult | ToolError>;
  /** Follows a path's moves to where its entry is now. */
  resolvePath(path: unknown): Promise<ResolveResult | ToolError>;
  /**
   * Splits, counts, embeds and stores one turn; resolves when its chunks are searchable. `time`
   * is when it was said (default now): its sentences, and the message when one is stored, carry it.
   */
  recordTurn(turn: {
    conversationId: number;
    role: Role;
    text: string;
    turnId?: number;
    time?: Date | number;
  }): Promise<RecordTurnResult | ToolError>;
  /**
   * Top-k chunks of a conversation (of every conversation with `null`) by fused relevance to
   * `query` (recency 0 by default).
   */
  searchChunks(
    conversationId: number | null,
    query: string,
    k?: number,
    options?: { recencyBias?: number; signals?: 'both' | 'lexical' | 'semantic' },
  ): Promise<ChunkHit[]>;
  exportMarkdown(rootPath?: unknown): Promise<string | ToolError>;
  importMarkdown(text: unknown): Promise<ImportResult | ToolError>;
  /** Top levels of the tree with entry counts, without reading rows (for the prompt outline). */
  memoryOutline(depth?: number): Promise<OutlineNode[]>;
  /**
   * Entries and past turns (of every chat) most relevant to `query` (auto-recall), in one
   * ranking: relevance alone, no recency, at or above `minRelevance` (default MIN_RELEVANCE for
   * an entry, TURN_MIN_RELEVANCE for a turn: src/memory/ranking.ts), at most `limit` (default 3, up to 100); one hit per turn, and no
   * turn that a hit entry's snapshot carries.
   */
  recallMemory(
    query: unknown,
    limit?: unknown,
    options?: RecallOptions,
  ): Promise<RecallHit[] | ToolError>;
  /**
   * Past turns of every chat that match `query` (the model's `searchConversations` tool): with
   * their chat, date and speaker, best first, at or above MIN_RELEVANCE, at most `limit`
   * (default 5, up to 20).
   */
  searchConversations(
    query: unknown,
    limit?: unknown,
    options?: Pick<RecallOptions, 'exclude'>,
  ): Promise<ConversationSearchResult | ToolError>;
  /**
   * Where to save `text` that a person asks to remember: under the heading whose entries match it
   * best (at or above MIN_RELEVANCE), else `Notes`, with a short free name made from it.
   */
  suggestMemoryPath(text: unknown): Promise<SuggestResult | ToolError>;
  createConversation(title?: unknown): Promise<{ status: 'SUCCESS'; id: number } | ToolError>;
  /** Newest first. */
  listConversations(): Promise<Conversation[]>;
  renameConversation(id: unknown, title: unknown): Promise<{ status: 'SUCCESS' } | ToolError>;
  /** Deletes the conversation, its messages and its semantic-index chunks in one transaction. */
  deleteConversation(id: unknown): Promise<{ status: 'SUCCESS'; messages: number } | ToolError>;
  /** Stores a message (not indexed: pass its id to recordTurn as `turnId` for that). */
  addMessage(message: {
    conversationId: number;
    role: Role;
    text: string;
    toolCalls?: ToolCallRecord[];
    toolCallId?: string;
    meta?: Record<string, unknown>;
  }): Promise<{ status: 'SUCCESS'; id: number } | ToolError>;
  /** Stores messages of one conversation in one transaction, all or none. */
  addMessages(
    messages: Parameters<MemoryApi['addMessage']>[0][],
  ): Promise<{ status: 'SUCCESS'; ids: number[] } | ToolError>;
  /** New text also takes the old text's sentences out of the index (recordTurn the new text). */
  updateMessage(
    id: unknown,
    patch: { text?: string; meta?: Record<string, unknown>; toolCalls?: ToolCallRecord[] },
  ): Promise<{ status: 'SUCCESS' } | ToolError>;
  /** Edit and resend: new text for a user message; every message after it is deleted (docs/chat.md). */
  editUserMessage(
    id: unknown,
    text: unknown,
  ): Promise<{ status: 'SUCCESS'; removed: number } | ToolError>;
  /** Deletes a message (an assistant's with its tool results) and its index sentences (docs/chat.md). */
  deleteMessage(id: unknown): Promise<{ status: 'SUCCESS'; deleted: number } | ToolError>;
  /** Shows another alternative of the reply to a user message (docs/chat.md). */
  selectAlternative(id: unknown, alternative: unknown): Promise<{ status: 'SUCCESS' } | ToolError>;
  /** Oldest first. */
  getMessages(conversationId: number): Promise<Message[]>;
  /**
   * The start of a chat turn in one call (docs/design.md, "One chat turn"): indexes the stored
   * user message (resolving once it is searchable), then returns the conversation, the outline
   * and the auto-recall hits.
   */
  prepareTurn(request: TurnRequest): Promise<TurnContext>;
  /** One entry without vectors, for the app (does not count as an access). */
  getEntry(path: unknown): Promise<EntryView | ToolError>;
  /**
   * Everything the explorer shows for `path` in one call: the entry (without vectors and
   * without touching `accessed`), its history, the entries below, the first children, where it
   * moved, and the conversation of each context chunk's source message.
   */
  entryDetail(path: unknown, options?: { childLimit?: number }): Promise<EntryDetail | ToolError>;
  /** Every entry, compactly, from the in-memory index (for the explorer tree and the map). */
  memoryIndex(): Promise<EntrySummary[]>;
  stats(): Promise<MemoryStats>;
  /**
   * Describes the writes behind `keys` (from Dexie's storagemutated), after the indexes have
   * taken them in: the worker's change feed (docs/design.md, "Change notifications").
   */
  describeChanges(keys: ChangedKeys): Promise<Omit<MemoryChange, 'tables'>>;
  getSetting(key: string): Promise<unknown>;
  setSetting(key: string, value: unknown): Promise<void>;
  /** JSON backup of entries (with context chunks, no vectors), history, conversations and messages. */
  exportJson(): Promise<string | ToolError>;
  /**
   * Imports another tool's file (docs/import-export.md): a SillyTavern chat (.jsonl), lorebook or
   * character card (.json, or a card's .png as bytes), or a KoboldAI Lite save. Validated before
   * any write; everything written in one transaction; a chat file imported before adds nothing.
   */
  importFile(file: { name: unknown; data: unknown }): Promise<FileImportResult | ToolError>;
  /**
   * All memory, or the entries at and below `rootPath`, as a SillyTavern World Info file (JSON
   * text) that SillyTavern loads as is and `importFile` brings back to the same entries.
   */
  exportLorebook(rootPath?: unknown): Promise<string | ToolError>;
  /** Checks a JSON backup as `importJson` would, writing nothing. */
  checkBackup(text: unknown): Promise<{ status: 'SUCCESS' } | ToolError>;
  /** Restores a JSON backup: `merge` keeps what is here, `replace` clears first. Validated before any write. */
  importJson(text: unknown, mode?: unknown): Promise<ImportResult | ToolError>;
  /** Re-embeds every row made by another model with the active one, in batches; resumable. */
  reembed(
    onProgress?: (progress: ReembedProgress) => void,
    signal?: AbortSignal,
  ): Promise<ReembedProgress | ToolError>;
  /** The semantic index of the active model: its size, storage form and memory (loads it). */
  indexInfo(): Promise<SemanticIndexInfo | ToolError>;
  /** Plug in the server's tokenizer (default: an estimate). */
  setTokenCounter(count: ((text: string) => number | Promise<number>) | null): void;
  /** The active embedding model. */
  modelInfo(): Promise<import('../embeddings/types').ModelInfo>;
  close(): Promise<void>;
}

export interface OpenMemoryOptions {
  /** IndexedDB database name (default `structured-memory`). */
  name?: string;
  embedder: import('../embeddings/types').Embedder;
  /** Clock in ms since epoch; tests control it. */
  now?: () => number;
  /** Tuning of the semantic index (tests and benchmarks); the defaults suit the app. */
  vectorIndex?: VectorIndexOptions;
  /**
   * Told how a rebuild of the chat index's stored pieces goes (once after an update that
   * changed what they hold, or when they disagree with the rows): the first search waits for it.
   */
  onIndexProgress?: (progress: IndexProgress) => void;
}

/** A rebuild of the chat index: the sentences done of all. */
export interface IndexProgress {
  done: number;
  total: number;
}

/** How the semantic index stores and searches its vectors. */
export interface VectorIndexOptions {
  /** Kernel: 'auto' takes WebAssembly SIMD where available, 'js' the plain loops. */
  kernel?: 'auto' | 'wasm-simd' | 'js';
  /** Row count from which searches take an int8 first pass (default 65,536). */
  quantiseFrom?: number;
  /** Most bytes of f32 vectors kept in RAM (default 256 MiB); beyond, only the int8 form. */
  f32Budget?: number;
  /** Candidates rescored exactly per result asked for (default 4). */
  rescoreFactor?: number;
  /** Fewest candidates rescored (default 64). */
  minRescore?: number;
  /**
   * Above the f32 budget, read the candidates' f32 vectors from the chunk rows for exact
   * cosines instead of taking their int8 cosines from RAM (default false: the benchmarks'
   * exact reference; docs/search.md, "Two stages").
   */
  rescoreFromRows?: boolean;
  /**
   * Row count from which a search first ranks sign codes (one bit a dimension) and scores only
   * their best candidates in int8 (docs/search.md, "Two stages"; default 65,536).
   */
  signFrom?: number;
  /** Share of the rows searched that the sign pass keeps as candidates (default 0.005)… */
  signShare?: number;
  /** …and the fewest it keeps (default 1,024; bench/README.md, "Two-stage vector search"). */
  signMin?: number;
  /**
   * From this many chunks a cold start answers from the shards' compact parts while the vectors
   * load (default 16,384; docs/search.md, "Cold start"); below, it loads them whole first.
   */
  compactFrom?: number;
}

/** The semantic index of the active model, as `indexInfo()` reports it. */
export interface SemanticIndexInfo {
  model: string;
  dims: number;
  chunks: number;
  kernel: 'wasm-simd' | 'js';
  /** Searches take the int8 first pass and rescore the best candidates in f32. */
  quantised: boolean;
  /** f32 vectors are held in RAM (else rescoring reads them from the chunk rows). */
  f32InMemory: boolean;
  /** Searches rank sign codes first and score only their best candidates in int8. */
  signCodes: boolean;
  /** Bytes of vectors held (f32, int8 codes and scales, sign codes). */
  vectorBytes: number;
  /** The kernel memory in all (vectors, scores, scratch, headroom). */
  kernelBytes: number;
  /** Per-row ids held in JS. */
  metaBytes: number;
}
