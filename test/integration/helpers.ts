// Shared helpers for the engine's acceptance tests: one embedder per test file, a controllable
// clock, fresh databases, raw database snapshots and result assertions.
import Dexie from 'dexie';
import { expect } from 'vitest';
import { BUNDLED_MODEL, createEmbedder, openMemory } from '../../src/memory';
import type { Embedder, ModelInfo } from '../../src/embeddings/types';
import type { ErrorCode, MemoryApi, OpenMemoryOptions } from '../../src/memory/types';

/** 2025-01-01T00:00:00Z: the start of every test clock. */
export const T0 = Date.UTC(2025, 0, 1);
export const DAY = 24 * 60 * 60 * 1000;

/** A clock the engine reads through `now`; tests move it by hand. */
export class Clock {
  constructor(public t = T0) {}
  readonly now = (): number => this.t;
  advance(ms: number): number {
    this.t += ms;
    return this.t;
  }
  advanceDays(days: number): number {
    return this.advance(days * DAY);
  }
}

// Vitest gives every test file its own module registry, so this is one embedder per file.
let embedder: Embedder | undefined;

/** The bundled offline model, created once per test file. */
export function sharedEmbedder(): Embedder {
  embedder ??= createEmbedder({ model: BUNDLED_MODEL });
  return embedder;
}

const opened: MemoryApi[] = [];

export interface TestMemory {
  mem: MemoryApi;
  name: string;
  clock: Clock;
}

/** Opens a memory on a fresh, uniquely named database (or on `name` to share one). */
export function openTestMemory(
  opts: {
    name?: string;
    clock?: Clock;
    embedder?: Embedder;
    vectorIndex?: OpenMemoryOptions['vectorIndex'];
  } = {},
): TestMemory {
  const name = opts.name ?? `test-${crypto.randomUUID()}`;
  const clock = opts.clock ?? new Clock();
  const mem = openMemory({
    name,
    embedder: opts.embedder ?? sharedEmbedder(),
    now: clock.now,
    ...(opts.vectorIndex ? { vectorIndex: opts.vectorIndex } : {}),
  });
  opened.push(mem);
  return { mem, name, clock };
}

/** Closes every memory opened through `openTestMemory` (use in `afterEach`). */
export async function closeAll(): Promise<void> {
  const all = opened.splice(0);
  await Promise.all(all.map((m) => m.close().catch(() => undefined)));
}

export type Snapshot = Record<string, unknown[]>;

/**
 * Every row of every table of database `name`, read in one transaction through a second,
 * dynamically opened connection. A database that does not exist reads as `{}`.
 */
export async function snapshotDb(name: string): Promise<Snapshot> {
  const db = new Dexie(name);
  try {
    await db.open();
  } catch (e) {
    if ((e as Error).name === 'NoSuchDatabaseError') return {};
    throw e;
  }
  try {
    const out: Snapshot = {};
    await db.transaction('r', db.tables, async () => {
      for (const t of db.tables) out[t.name] = await t.toArray();
    });
    return out;
  } finally {
    db.close();
  }
}

/** Rows of one table (e.g. `structured_memory`). */
export async function tableRows<T = Record<string, unknown>>(
  name: string,
  table: string,
): Promise<T[]> {
  const snap = await snapshotDb(name);
  expect(Object.keys(snap), `database ${name} has a table ${table}`).toContain(table);
  return snap[table] as T[];
}

/** Same as `snapshotDb`, with empty tables left out (a missing database equals an empty one). */
export async function contentSnapshot(name: string): Promise<Snapshot> {
  const snap = await snapshotDb(name);
  return Object.fromEntries(Object.entries(snap).filter(([, rows]) => rows.length > 0));
}

type AnyResult = { status: string } | string;

/** Asserts a SUCCESS result and narrows its type. */
export function ok<R extends AnyResult>(r: R): Extract<R, { status: 'SUCCESS' }> {
  if (typeof r !== 'object' || r === null || r.status !== 'SUCCESS') {
    throw new Error(`expected status SUCCESS, got ${safeJson(r)}`);
  }
  return r as Extract<R, { status: 'SUCCESS' }>;
}

/**
 * A memory holding `content` at `path` restored from a backup, as an entry stored before a rule
 * that now refuses such a path (a hidden character) was made; `backup` restores it again.
 */
export async function memoryWithStored(path: string, content: string) {
  const src = openTestMemory();
  ok(await src.mem.saveMemory('Stored/Placeholder', content, 0));
  const json = (await src.mem.exportJson()) as string;
  const backup = json.replaceAll('Stored/Placeholder', JSON.stringify(path).slice(1, -1));
  const tm = openTestMemory();
  ok(await tm.mem.importJson(backup, 'replace'));
  return { ...tm, backup };
}

/** Asserts `{ status: 'ERROR', code, message }` with a non-empty message. */
export function expectError(r: unknown, code: ErrorCode | readonly ErrorCode[]): void {
  const codes = typeof code === 'string' ? [code] : code;
  expect(r, `expected an ERROR ${codes.join('|')}, got ${safeJson(r)}`).toMatchObject({
    status: 'ERROR',
  });
  const e = r as { code: unknown; message: unknown };
  expect(codes, `error code of ${safeJson(r)}`).toContain(e.code);
  expect(typeof e.message).toBe('string');
  expect((e.message as string).trim().length).toBeGreaterThan(0);
}

/**
 * A missing path. Where the spec leaves the shape open (everything but `queryMemory`), both
 * `{ status: 'NOT_FOUND' }` and `{ status: 'ERROR', code: 'NOT_FOUND' }` are accepted.
 */
export function expectNotFound(r: unknown): void {
  const s = r as { status?: unknown; code?: unknown };
  const isNotFound = s?.status === 'NOT_FOUND' || (s?.status === 'ERROR' && s.code === 'NOT_FOUND');
  expect(isNotFound, `expected NOT_FOUND, got ${safeJson(r)}`).toBe(true);
}

/** True when `value` holds a typed array anywhere (vectors must not reach the model). */
export function containsTypedArray(value: unknown, seen = new Set<unknown>()): boolean {
  if (ArrayBuffer.isView(value)) return true;
  if (typeof value !== 'object' || value === null || seen.has(value)) return false;
  seen.add(value);
  return Object.values(value).some((v) => containsTypedArray(v, seen));
}

/**
 * Sentences of a text as `Intl.Segmenter` splits them (docs/design.md, "Semantic index"),
 * trimmed, empty ones dropped.
 */
export function sentences(text: string): string[] {
  const seg = new Intl.Segmenter('en', { granularity: 'sentence' });
  return [...seg.segment(text)].map((s) => s.segment.trim()).filter((s) => s.length > 0);
}

/** Milliseconds of a Date (or anything `new Date` accepts). */
export function ms(d: unknown): number {
  return new Date(d as string | number | Date).getTime();
}

export function safeJson(v: unknown): string {
  try {
    const s = JSON.stringify(v, (_k, x: unknown) =>
      typeof x === 'bigint' ? `${x}n` : ArrayBuffer.isView(x) ? '[typed array]' : x,
    );
    return s === undefined ? safeString(v) : s.length > 600 ? s.slice(0, 600) + '…' : s;
  } catch {
    return safeString(v);
  }
}

function safeString(v: unknown): string {
  try {
    const s = String(v);
    return s.length > 600 ? s.slice(0, 600) + '…' : s;
  } catch {
    return `[unprintable ${typeof v}]`;
  }
}

/** Another "model": the bundled vectors, rotated, under a different id. */
export function otherModel(): Embedder {
  const base = sharedEmbedder();
  let info: ModelInfo | undefined;
  return {
    async ready() {
      info ??= { ...(await base.ready()), id: 'test/rotated', bundled: false };
      return info;
    },
    async embed(texts) {
      return (await base.embed(texts)).map((v) =>
        Float32Array.from(v, (_, i) => v[(i + 1) % v.length]),
      );
    },
    dispose: async () => undefined,
  };
}

/**
 * `inner` with a gate: once armed (at once unless `armed: false`), the first call whose texts
 * contain `marker` waits at it (`atGate` resolves) until `release()`. A write held there lets a
 * test land another write meanwhile.
 */
export function gatedEmbedder(inner: Embedder, marker: string, { armed = true } = {}) {
  let release = () => {};
  let reached = () => {};
  const atGate = new Promise<void>((r) => (reached = r));
  const hold = new Promise<void>((r) => (release = r));
  const embedder: Embedder = {
    ready: () => inner.ready(),
    dispose: () => inner.dispose(),
    async embed(texts, signal) {
      if (armed && texts.some((t) => t.includes(marker))) {
        armed = false;
        reached();
        await hold;
      }
      return inner.embed(texts, signal);
    },
  };
  return { embedder, atGate, arm: () => (armed = true), release: () => release() };
}
