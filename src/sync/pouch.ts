// The part of PouchDB's API the sync engine uses (docs/sync.md). The app passes pouchdb-browser;
// Node tests pass pouchdb-core with the memory and http adapters and replication.

export interface PouchDoc {
  _id: string;
  _rev?: string;
  _deleted?: boolean;
  _revisions?: { start: number; ids: string[] };
  _conflicts?: string[];
  [field: string]: unknown;
}

export interface PouchWriteResult {
  ok?: boolean;
  id?: string;
  rev?: string;
  error?: string | boolean;
  status?: number;
  message?: string;
}

export interface ReplicationResult {
  ok: boolean;
  docs_read?: number;
  docs_written?: number;
  errors?: unknown[];
}

export interface Replication extends Promise<ReplicationResult> {
  on(event: 'change', fn: (info: { docs_written?: number; docs_read?: number }) => void): this;
  on(event: 'paused', fn: (err?: unknown) => void): this;
  on(event: 'active' | 'complete', fn: () => void): this;
  on(event: 'error' | 'denied', fn: (err: unknown) => void): this;
  cancel(): void;
}

export interface ReplicateOptions {
  live?: boolean;
  retry?: boolean;
  batch_size?: number;
  batches_limit?: number;
  back_off_function?: (delay: number) => number;
  filter?: (doc: PouchDoc) => boolean;
}

export interface PouchDatabase {
  info(): Promise<{ doc_count: number; update_seq: number | string }>;
  get(id: string, options?: { conflicts?: boolean; rev?: string }): Promise<PouchDoc>;
  get(id: string, options: { open_revs: 'all' }): Promise<{ ok?: PouchDoc; missing?: string }[]>;
  put(doc: PouchDoc): Promise<PouchWriteResult>;
  bulkDocs(docs: PouchDoc[], options?: { new_edits?: boolean }): Promise<PouchWriteResult[]>;
  allDocs(options: {
    keys?: string[];
    include_docs?: boolean;
    limit?: number;
    startkey?: string;
    endkey?: string;
  }): Promise<{
    total_rows?: number;
    rows: {
      id?: string;
      key: string;
      value?: { rev: string; deleted?: boolean };
      doc?: PouchDoc | null;
      error?: string;
    }[];
  }>;
  changes(options: {
    since: number | string;
    limit?: number;
    style?: 'all_docs' | 'main_only';
    return_docs?: boolean;
  }): Promise<{
    results: { id: string; seq: number | string; changes: { rev: string }[]; deleted?: boolean }[];
    last_seq: number | string;
  }>;
  replicate: {
    to(target: PouchDatabase, options?: ReplicateOptions): Replication;
    from(source: PouchDatabase, options?: ReplicateOptions): Replication;
  };
  destroy(): Promise<unknown>;
  close(): Promise<unknown>;
}

export interface PouchOptions {
  auth?: { username: string; password: string };
  skip_setup?: boolean;
}

/** Opens a local database by name, or a remote one by URL. */
export type PouchFactory = (nameOrUrl: string, options?: PouchOptions) => PouchDatabase;
