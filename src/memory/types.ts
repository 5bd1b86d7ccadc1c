// Row types of the database and result shapes of the memory tools (SPEC §2, §4).

/** Any JSON value: what `saveMemory` accepts as content. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

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
}

export interface Conversation {
  id?: number;
  title: string;
  created: Date;
  modified: Date;
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
  | 'STORAGE_FULL'
  | 'MODEL_UNAVAILABLE';

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
}

/** A chunk as the model sees it: no vectors. */
export interface ChunkView {
  role: Role;
  text: string;
  similarity: number;
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
  score?: number;
  similarity?: number;
  recency?: number;
  relevantChunks?: ChunkView[];
}

export interface HeadingChildHeading {
  path: string;
  heading: string;
  isHeading: true;
  descendants: number;
  modified: Date;
  score?: number;
  similarity?: number;
  recency?: number;
  /** With a query: the best-scoring descendant entry. */
  bestMatch?: { path: string; heading: string; content: JsonValue; relevantChunks: ChunkView[] };
}

export type HeadingChild = HeadingChildEntry | HeadingChildHeading;

export interface HeadingResult {
  status: 'SUCCESS';
  path: string;
  query?: string;
  children: HeadingChild[];
  totalChildren: number;
}

export type TreeNode = { [segment: string]: JsonValue | TreeNode };

export interface ListResult {
  status: 'SUCCESS';
  path: string;
  tree: TreeNode;
  totalEntries: number;
  truncated?: boolean;
}

export interface DeleteResult {
  status: 'SUCCESS';
  path: string;
  deleted: number;
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
  versions: { id: number; version: number; reason: HistoryRow['reason']; replaced: Date; content: JsonValue; modified: Date }[];
}

export interface ImportResult {
  status: 'SUCCESS';
  imported: number;
  created: number;
  updated: number;
}

export interface RecordTurnResult {
  status: 'SUCCESS';
  turnId: number;
  chunks: number;
}

export interface ChunkHit {
  chunk: Omit<Chunk, 'embedding'>;
  similarity: number;
}
