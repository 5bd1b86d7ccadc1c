// A rename away from a path with a hidden character (stored before such paths were refused) can
// be undone: the move back to where the entry came from is not refused.
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, ok, openTestMemory } from './helpers';

afterEach(closeAll);

const OLD = 'Lore/Ca\u200bfe';

describe('rename away from a path with a hidden character', () => {
  it('can be undone (moved back)', async () => {
    const src = openTestMemory();
    ok(await src.mem.saveMemory('Lore/Cafe', 'The cafe opens at dawn.', 0));
    const json = (await src.mem.exportJson()) as string;
    const { mem } = openTestMemory();
    ok(await mem.importJson(json.replaceAll('Lore/Cafe', OLD), 'merge'));
    ok(await mem.moveMemory(OLD, 'Lore/Cafe'));
    // The explorer's Undo of that move.
    const undo = await mem.moveMemory('Lore/Cafe', OLD);
    expect(undo, JSON.stringify(undo)).toMatchObject({ status: 'SUCCESS' });
  });
});
