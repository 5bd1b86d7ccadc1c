// Merging a backup where an entry holds the file's content already: the entry stays above every
// version its History lists, the backup's included (docs/trash.md, "Version numbers").
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, ok, openTestMemory } from './helpers';

afterEach(closeAll);

describe('merge: an unchanged entry with the backup history of a later version', () => {
  it('keeps the entry above every version its History lists', async () => {
    // Device A: saved, changed (the memory keeper), changed back (its Undo restores v1).
    const a = openTestMemory();
    const v1 = ok(await a.mem.saveMemory('Trips/Flight', 'On the 9th.', 0));
    a.clock.advance(1000);
    ok(await a.mem.saveMemory('Trips/Flight', 'On the 10th.', 0));
    a.clock.advance(1000);
    const first = ok(await a.mem.getHistory('Trips/Flight')).versions[0];
    ok(await a.mem.restoreMemory(first.id));
    expect(v1.version).toBe(1);
    expect(await a.mem.getEntry('Trips/Flight')).toMatchObject({ version: 3 });
    const json = (await a.mem.exportJson()) as string;

    // Device B holds the same content at version 1 (saved there, or an older backup merged).
    const b = openTestMemory();
    ok(await b.mem.saveMemory('Trips/Flight', 'On the 9th.', 0));
    const r = ok(await b.mem.importJson(json, 'merge'));
    expect(r).toMatchObject({ unchanged: 1 });

    const entry = (await b.mem.getEntry('Trips/Flight')) as { version: number };
    const listed = ok(await b.mem.getHistory('Trips/Flight')).versions.map((v) => v.version);
    // The rule of docs/trash.md "Version numbers": an entry's version is above every version
    // History lists at its path.
    expect(
      Math.max(...listed),
      `History lists ${listed} but the entry is v${entry.version}`,
    ).toBeLessThan(entry.version);
  });

  it('a save after such a merge makes a version number History lists already', async () => {
    const a = openTestMemory();
    ok(await a.mem.saveMemory('Trips/Flight', 'On the 9th.', 0));
    a.clock.advance(1000);
    ok(await a.mem.saveMemory('Trips/Flight', 'On the 10th.', 0));
    a.clock.advance(1000);
    ok(await a.mem.saveMemory('Trips/Flight', 'On the 9th.', 0));
    const json = (await a.mem.exportJson()) as string;
    const b = openTestMemory();
    ok(await b.mem.saveMemory('Trips/Flight', 'On the 9th.', 0));
    ok(await b.mem.importJson(json, 'merge'));
    const saved = ok(await b.mem.saveMemory('Trips/Flight', 'On the 11th.', 0));
    const listed = ok(await b.mem.getHistory('Trips/Flight')).versions.map((v) => v.version);
    // The new content is shown as "version 2" while History lists A's "On the 10th." as version 2.
    expect(listed, `saved as v${saved.version}; History lists ${listed}`).not.toContain(
      saved.version,
    );
  });
});
