// This app's own lorebook export comes back at its paths, also one with a hidden character (stored
// before such paths were refused): not left out as if no name were free.
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, ok, openTestMemory } from './helpers';

afterEach(closeAll);

const OLD = 'Lore/Ca\u200bfe';

describe('lorebook exported here and imported back', () => {
  it('an entry whose path holds a hidden character comes back where it was', async () => {
    const src = openTestMemory();
    ok(await src.mem.saveMemory('Lore/Cafe', 'The cafe opens at dawn.', 0));
    const json = (await src.mem.exportJson()) as string;
    const { mem } = openTestMemory();
    ok(await mem.importJson(json.replaceAll('Lore/Cafe', OLD), 'merge'));
    const book = await mem.exportLorebook('Lore');
    expect(typeof book).toBe('string');
    // Same store, unchanged: nothing to write, nothing left out.
    const same = ok(await mem.importFile({ name: 'Lore.json', data: book as string }));
    expect(same.skipped).toEqual([]);
    // Deleted here, then put back from the export.
    ok(await mem.deleteMemory(OLD));
    const back = ok(await mem.importFile({ name: 'Lore.json', data: book as string }));
    expect(back.skipped).toEqual([]);
    expect((await mem.memoryIndex()).map((e) => e.path)).toHaveLength(1);
  });
});
