// Parts lifted out of the tool closures (src/memory/tools/): a new message's shape
// (checkMessage), a backup's problems before anything is written (backupProblems), and taking
// messages' sentences out of the semantic index (dropTurnChunks).
import { describe, expect, it } from 'vitest';
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  backupProblems,
  backupValidator,
} from '../../src/memory/tools/backup';
import { MemoryDB } from '../../src/memory/db';
import { addToShards, shardVectorCount } from '../../src/memory/shards';
import {
  checkMessage,
  dropTurnChunks,
  type NewMessage,
} from '../../src/memory/tools/conversations';
import type { Chunk } from '../../src/memory/types';

describe('checkMessage', () => {
  it('gives the parts to store', () => {
    expect(checkMessage({ conversationId: 3, role: 'tool', text: '{}', toolCallId: 'c1' })).toEqual(
      { conversationId: 3, parts: { toolCallId: 'c1' } },
    );
  });

  it.each([
    ['no object', null, /message object/],
    ['a negative conversation', { conversationId: -2, role: 'user', text: 'x' }, /conversationId/],
    ['an unknown role', { conversationId: 1, role: 'narrator', text: 'x' }, /role must be one of/],
    ['text that is not a string', { conversationId: 1, role: 'user', text: 5 }, /text must be/],
  ])('refuses %s', (_what, msg, why) => {
    const r = checkMessage(msg as unknown as NewMessage);
    expect(r).toMatchObject({ status: 'ERROR', code: 'INVALID_ARGUMENT' });
    expect((r as { message: string }).message).toMatch(why);
  });
});

describe('backupProblems', () => {
  const validator = backupValidator();
  const at = '2026-01-02T03:04:05.000Z';
  const entry = {
    path: 'A/B',
    content: 'x',
    contextChunks: [],
    version: 1,
    created: at,
    modified: at,
    accessed: at,
  };
  const backup = (extra: Record<string, unknown> = {}) => ({
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    exported: at,
    entries: [entry],
    ...extra,
  });

  it('none for a good backup', () => {
    expect(backupProblems(backup(), validator)).toEqual([]);
  });

  it("the file's shape first, where it is wrong", () => {
    const found = backupProblems({ format: BACKUP_FORMAT, version: BACKUP_VERSION }, validator);
    expect(found.length).toBeGreaterThan(0);
    expect(found.join('\n')).toMatch(/entries/);
  });

  it('then the values: paths, duplicates, messages of conversations not in the file', () => {
    const found = backupProblems(
      backup({
        entries: [entry, { ...entry, path: 'a//b' }, entry],
        conversations: [],
        messages: [{ id: 1, conversationId: 9, role: 'user', text: 'hi', time: at }],
      }),
      validator,
    );
    expect(found).toEqual([
      expect.stringMatching(/^entries\[1\]: invalid path/),
      'entries[2]: duplicate path "A/B"',
      'messages[0]: conversation 9 is not in the file',
    ]);
  });

  it('at most ten', () => {
    const many = Array.from({ length: 15 }, () => entry);
    expect(backupProblems(backup({ entries: many }), validator)).toHaveLength(10);
  });
});

describe('dropTurnChunks', () => {
  it("deletes the turns' sentences, rows and shard places, and says which", async () => {
    const db = new MemoryDB(`tool-checks-${crypto.randomUUID()}`);
    try {
      const rows: Chunk[] = [1, 1, 2].map((turnId, i) => ({
        conversationId: 1,
        turnId,
        sentenceId: i,
        role: 'user',
        text: `Sentence ${i}.`,
        tokenCount: 3,
        embedding: new Float32Array([1, 0]),
        model: 'm',
        time: new Date(0),
      }));
      const ids = (await db.chunks.bulkAdd(rows, { allKeys: true })) as number[];
      rows.forEach((r, i) => (r.id = ids[i]));
      await addToShards(db, rows);
      expect(await shardVectorCount(db, 'm')).toBe(3);

      const dropped = await db.transaction(
        'rw',
        db.chunks,
        db.shards,
        db.shardHeads,
        db.shardCodes,
        async () => dropTurnChunks(db, [1]),
      );
      expect(dropped.sort()).toEqual(ids.slice(0, 2).sort());
      expect((await db.chunks.toArray()).map((c) => c.turnId)).toEqual([2]);
      expect(await shardVectorCount(db, 'm')).toBe(1);
      expect(await dropTurnChunks(db, [])).toEqual([]);
    } finally {
      db.close();
    }
  });
});
