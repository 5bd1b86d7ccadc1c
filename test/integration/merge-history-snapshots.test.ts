// Merging a backup: its history versions' snapshots name the merged messages by their ids here.
import { afterEach, describe, expect, it } from 'vitest';
import type { HistoryRow } from '../../src/memory/types';
import { closeAll, ok, openTestMemory, snapshotDb } from './helpers';

afterEach(closeAll);

describe('merge: history versions of an entry', () => {
  it('name the merged messages in their snapshots', async () => {
    const a = openTestMemory();
    const trip = ok(await a.mem.createConversation('Trip'));
    ok(
      await a.mem.recordTurn({
        conversationId: trip.id,
        role: 'user',
        text: 'We fly to Lisbon on the 9th.',
      }),
    );
    ok(
      await a.mem.saveMemory('Trips/Flight', 'Lisbon, on the 9th.', 1000, {
        conversationId: trip.id,
      }),
    );
    ok(
      await a.mem.saveMemory('Trips/Flight', 'Lisbon, on the 10th.', 1000, {
        conversationId: trip.id,
      }),
    );
    const json = (await a.mem.exportJson()) as string;

    const b = openTestMemory();
    const own = ok(await b.mem.createConversation('Mine'));
    for (const text of ['one', 'two', 'three'])
      ok(await b.mem.addMessage({ conversationId: own.id, role: 'user', text }));
    ok(await b.mem.importJson(json, 'merge'));
    const tripHere = (await b.mem.listConversations()).find((c) => c.title === 'Trip')!;
    const ids = new Set((await b.mem.getMessages(tripHere.id!)).map((m) => m.id));
    const history = (await snapshotDb(b.name)).history as HistoryRow[];
    const turns = history.flatMap((h) => h.entry.contextChunks.map((c) => c.turn_id));
    expect(turns.length).toBeGreaterThan(0);
    expect(turns.filter((t) => !ids.has(t))).toEqual([]);
  });
});
