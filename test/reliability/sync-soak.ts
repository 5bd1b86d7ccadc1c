// The sync soak's pieces (sync-soak.test.ts): the churn a seed makes (saves, edits, moves, deletes,
// restores and chat messages on three devices, offline flips, the server restarted), the record
// of every write made, each device's store as a comparable digest, and the checks that end a run:
// every device holds the same, no write is lost, nothing is doubled.
import fc from 'fast-check';

/** Paths the churn writes: few, so that devices often touch the same one. */
export const PATHS = [
  'Soak/tea',
  'Soak/coffee',
  'Soak/cat',
  'Soak/plans/spring',
  'Soak/plans/summer',
  'Soak/people/ana',
  'Soak/people/ben',
];
export const DEVICES = 3;

export type Op =
  | { k: 'save'; d: number; p: number }
  | { k: 'move'; d: number; p: number; q: number }
  | { k: 'delete'; d: number; p: number }
  | { k: 'restore'; d: number; p: number; i: number }
  | { k: 'chat'; d: number; c: number }
  | { k: 'offline'; d: number }
  | { k: 'online'; d: number }
  | { k: 'restart'; downMs: number }
  | { k: 'pause'; ms: number };

const device = fc.integer({ min: 0, max: DEVICES - 1 });
const path = fc.integer({ min: 0, max: PATHS.length - 1 });

/** One step of churn; writes are the commonest, disruptions rarer. */
export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ k: fc.constant('save' as const), d: device, p: path }) },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant('move' as const), d: device, p: path, q: path }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('delete' as const), d: device, p: path }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('restore' as const),
      d: device,
      p: path,
      i: fc.nat({ max: 5 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ k: fc.constant('chat' as const), d: device, c: fc.nat({ max: 2 }) }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('offline' as const), d: device }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('online' as const), d: device }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('restart' as const),
      downMs: fc.integer({ min: 50, max: 1500 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('pause' as const),
      ms: fc.integer({ min: 20, max: 600 }),
    }),
  },
);

/** A run of churn with at least one server restart and one offline flip in it. */
export function churnArb(length: number): fc.Arbitrary<Op[]> {
  return fc
    .tuple(
      fc.array(opArb, { minLength: length, maxLength: length }),
      fc.nat({ max: length - 1 }),
      fc.nat({ max: length - 1 }),
      device,
    )
    .map(([ops, restartAt, offlineAt, d]) => {
      const out = [...ops];
      out.splice(restartAt, 0, { k: 'restart', downMs: 800 });
      out.splice(offlineAt, 0, { k: 'offline', d });
      return out;
    });
}

// ---- digests ---------------------------------------------------------------------------------

/** The JSON backup of one device (exportJson), as far as the checks read it. */
export interface Backup {
  entries: { path: string; content: unknown; version: number }[];
  history?: {
    path: string;
    version: number;
    reason: string;
    replaced: string;
    entry: { content: unknown };
    movedTo?: string;
    deleteRoot?: string;
    conflictFrom?: string;
  }[];
  conversations?: { id: number; title: string; created: string }[];
  messages?: { conversationId: number; role: string; text: string; time: string }[];
}

/** A device's store in terms that do not depend on the device (no local ids), sorted. */
export interface Digest {
  entries: string[];
  history: string[];
  conversations: string[];
  messages: string[];
}

export function digestOf(b: Backup): Digest {
  const convKey = new Map(
    (b.conversations ?? []).map((c) => [c.id, `${c.created} ${c.title}`] as const),
  );
  const sorted = (xs: string[]) => [...xs].sort();
  return {
    entries: sorted(b.entries.map((e) => JSON.stringify([e.path, e.version, e.content]))),
    history: sorted(
      (b.history ?? []).map((h) =>
        JSON.stringify([
          h.path,
          h.version,
          h.reason,
          h.replaced,
          h.entry.content,
          h.movedTo ?? null,
          h.deleteRoot ?? null,
          h.conflictFrom ?? null,
        ]),
      ),
    ),
    conversations: sorted([...convKey.values()]),
    messages: sorted(
      (b.messages ?? []).map((m) =>
        JSON.stringify([convKey.get(m.conversationId) ?? null, m.role, m.time, m.text]),
      ),
    ),
  };
}

/** What differs between two digests, in a few lines (for a failure's message). */
export function digestDiff(a: Digest, b: Digest): string {
  const lines: string[] = [];
  for (const key of ['entries', 'history', 'conversations', 'messages'] as const) {
    const bs = new Set(b[key]);
    const as = new Set(a[key]);
    const onlyA = a[key].filter((x) => !bs.has(x));
    const onlyB = b[key].filter((x) => !as.has(x));
    if (onlyA.length || onlyB.length)
      lines.push(
        `${key}: only in the first ${JSON.stringify(onlyA.slice(0, 4))}; only in the second ${JSON.stringify(onlyB.slice(0, 4))}`,
      );
  }
  return lines.join('\n');
}

/**
 * The writes a run lost or doubled: every saved token must be in a live entry or in history (as
 * an earlier version, a moved or deleted one, or a conflict's loser), every message once; no
 * history row twice, no message twice.
 */
export function accountingProblems(
  b: Backup,
  written: { tokens: readonly string[]; messages: readonly string[] },
): string[] {
  const problems: string[] = [];
  const tokenOf = (content: unknown) =>
    content && typeof content === 'object' && 'w' in content ? String(content.w) : undefined;
  const held = new Set<string>();
  for (const e of b.entries) {
    const t = tokenOf(e.content);
    if (t) held.add(t);
  }
  for (const h of b.history ?? []) {
    const t = tokenOf(h.entry.content);
    if (t) held.add(t);
  }
  const lost = written.tokens.filter((t) => !held.has(t));
  if (lost.length) problems.push(`saves lost (in no entry and no history): ${lost.join(', ')}`);

  const texts = (b.messages ?? []).map((m) => m.text);
  const count = new Map<string, number>();
  for (const t of texts) count.set(t, (count.get(t) ?? 0) + 1);
  const missing = written.messages.filter((m) => !count.has(m));
  if (missing.length) problems.push(`messages lost: ${missing.join(', ')}`);
  const doubled = [...count].filter(([, n]) => n > 1).map(([t]) => t);
  if (doubled.length) problems.push(`messages doubled: ${doubled.join(', ')}`);

  const paths = b.entries.map((e) => e.path);
  if (new Set(paths).size !== paths.length) problems.push('an entry path is listed twice');
  const rows = digestOf(b).history;
  const seen = new Set<string>();
  for (const r of rows) {
    if (seen.has(r)) problems.push(`history row doubled: ${r}`);
    seen.add(r);
  }
  const convs = digestOf(b).conversations;
  if (new Set(convs).size !== convs.length) problems.push('a conversation is listed twice');
  return problems;
}
