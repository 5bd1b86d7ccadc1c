// Sync at size and under faults, against express-pouchdb in memory on 127.0.0.1: 1,000 entries
// into an empty memory, the server gone mid-sync (nothing lost, nothing twice), and end-to-end
// encryption (the server holds no plaintext; a wrong passphrase writes nothing here).
import { describe, expect, it } from 'vitest';
import type { SyncConfig } from '../../src/sync/engine';
import type { MemoryApi } from '../../src/memory/types';
import { openDevice, serverForFile } from './sync-device';

const file = serverForFile();
const { engines, stopWhen } = file;

let serial = 0;
const freshDb = () => `faults-${process.pid}-${++serial}`;

function device(database: string, extra: Partial<SyncConfig> = {}, label = 'Desktop') {
  return openDevice({ url: file.server.url, database, label, engines, extra });
}

/** A JSON backup of `n` entries (what an older memory brings), for a fast bulk load. */
function backupOf(n: number, word = 'note'): string {
  const at = new Date(Date.UTC(2025, 0, 1)).toISOString();
  return JSON.stringify({
    format: 'structured-memory-backup',
    version: 1,
    entries: Array.from({ length: n }, (_, i) => ({
      path: `bulk/group-${Math.floor(i / 50)}/${word}-${i}`,
      content: { text: `${word} number ${i}`, n: i },
      contextChunks: [],
      version: 1,
      created: at,
      modified: at,
      accessed: at,
    })),
  });
}

async function paths(mem: MemoryApi): Promise<string[]> {
  return (await mem.memoryIndex()).map((e) => e.path).sort();
}

describe('sync at size and under faults', () => {
  it('1,000 entries reach an empty memory on the first sync, each once', async () => {
    const db = freshDb();
    const a = await device(db);
    const imported = await a.mem.importJson(backupOf(1000));
    expect(imported).toMatchObject({ status: 'SUCCESS', imported: 1000 });
    expect((await a.sync.syncNow()).error).toBeNull();
    const b = await device(db, {}, 'Laptop');
    const seen: { done: number; total: number }[] = [];
    b.sync.onStatus((st) => {
      if (st.embedding) seen.push(st.embedding);
    });
    const s = await b.sync.syncNow();
    expect(s.error).toBeNull();
    await b.sync.idle(); // embedded in the background, with progress
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((p) => p.total === 1000 && p.done < 1000)).toBe(true);
    expect(b.sync.status().embedding).toBeUndefined();
    const got = await paths(b.mem);
    expect(got).toHaveLength(1000);
    expect(got).toEqual(await paths(a.mem));
    const hit = await b.mem.queryMemoryHeading('bulk', 'note number 777', 0, { limit: 3 });
    if (hit.status !== 'SUCCESS') throw new Error('search failed');
    expect(hit.children[0].path).toBe('bulk/group-15/note-777');
    expect((await b.mem.stats()).stale).toBe(0);
  });

  it('the server stopped mid-sync: the sync says so, resumes, and nothing is lost or doubled', async () => {
    const db = freshDb();
    const a = await device(db);
    await a.mem.importJson(backupOf(600, 'item'));
    expect((await a.sync.syncNow()).error).toBeNull();

    const b = await device(db, {}, 'Laptop');
    await b.mem.saveMemory('local/only', 'made on B while apart');
    let bulkGets = 0;
    stopWhen((path) => path.includes('_bulk_get') && ++bulkGets === 1);
    const broken = await b.sync.syncNow();
    expect(broken.error?.code).toBe('UNREACHABLE');
    await file.server.start();
    const resumed = await b.sync.syncNow();
    expect(resumed.error).toBeNull();
    expect(await paths(b.mem)).toEqual([...(await paths(a.mem)), 'local/only'].sort());

    // The push side too: stopped while B sends, then resumed.
    await b.mem.importJson(backupOf(300, 'extra'));
    let bulkDocs = 0;
    stopWhen((path) => path.includes('_bulk_docs') && ++bulkDocs === 1);
    expect((await b.sync.syncNow()).error?.code).toBe('UNREACHABLE');
    await file.server.start();
    expect((await b.sync.syncNow()).error).toBeNull();
    expect((await a.sync.syncNow()).error).toBeNull();
    const onA = await paths(a.mem);
    expect(onA).toHaveLength(901);
    expect(onA).toEqual(await paths(b.mem));
    const live = (await file.server.database(db).allDocs({})).rows.filter((r) =>
      r.key.startsWith('entry:'),
    );
    expect(live).toHaveLength(901);
  });

  it('with encryption the server holds no plaintext, and another device with the passphrase reads it', async () => {
    const db = freshDb();
    const secret = { encrypt: true, passphrase: 'correct horse battery staple' };
    const a = await device(db, secret);
    const conv = await a.mem.createConversation('Private planning');
    if (conv.status !== 'SUCCESS') throw new Error('no conversation');
    await a.mem.recordTurn({
      conversationId: conv.id,
      role: 'user',
      text: 'My bank PIN hint is marmalade.',
    });
    await a.mem.saveMemory('private/bank', { hint: 'marmalade sandwich' }, 100, {
      conversationId: conv.id,
    });
    await a.mem.saveMemory('private/bank', { hint: 'marmalade toast' });
    await a.mem.setSetting('app', { persona: 'Speak like a pirate' });
    expect((await a.sync.syncNow()).error).toBeNull();

    const stored = JSON.stringify(await file.server.storedDocs(db));
    for (const plain of ['marmalade', 'private', 'bank', 'Private planning', 'pirate', 'entry:'])
      expect(stored).not.toContain(plain);

    const b = await device(db, secret, 'Laptop');
    expect((await b.sync.syncNow()).error).toBeNull();
    const r = await b.mem.queryMemory('private/bank');
    expect(r.status === 'SUCCESS' && r.content).toEqual({ hint: 'marmalade toast' });
    expect((await b.mem.listConversations()).map((c) => c.title)).toEqual(['Private planning']);
  });

  it('a wrong or missing passphrase is a clear error and writes nothing here', async () => {
    const db = freshDb();
    const a = await device(db, { encrypt: true, passphrase: 'right one' });
    await a.mem.saveMemory('k/v', 'sealed');
    expect((await a.sync.syncNow()).error).toBeNull();

    const b = await device(db, { encrypt: true, passphrase: 'wrong one' }, 'Laptop');
    await b.mem.saveMemory('b/own', 'mine');
    const wrong = await b.sync.syncNow();
    expect(wrong.error?.code).toBe('WRONG_PASSPHRASE');
    expect(wrong.error?.fix).toMatch(/Nothing was written here/);
    expect(await paths(b.mem)).toEqual(['b/own']);
    await b.sync.configure({
      url: file.server.url,
      database: db,
      username: '',
      password: '',
      encrypt: false,
      passphrase: '',
      live: false,
    });
    expect((await b.sync.syncNow()).error?.code).toBe('NEEDS_PASSPHRASE');
    expect(await paths(b.mem)).toEqual(['b/own']);
    // Nothing of B reached the server either.
    expect(JSON.stringify(await file.server.storedDocs(db))).not.toContain('mine');
  });
});
