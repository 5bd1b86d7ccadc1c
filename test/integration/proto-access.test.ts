// Reading an entry records when it was read without rewriting its content: a `__proto__` key in
// the content survives any number of reads (Dexie's `update()` copied the row by assignment and
// turned that key into the copy's prototype, so the second read lost it).
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, ok, openTestMemory } from './helpers';

afterEach(closeAll);

describe('queryMemory keeps the content it reads', () => {
  it('a __proto__ key is still an own key after reads', async () => {
    const { mem } = openTestMemory();
    const content = JSON.parse('{"__proto__":{"polluted":true},"b":1}');
    ok(await mem.saveMemory('Content/Case', content, 0));
    for (let i = 0; i < 3; i++) {
      const r = ok(await mem.queryMemory('Content/Case'));
      const got = r.content as Record<string, unknown>;
      expect(Object.keys(got).sort()).toEqual(['__proto__', 'b']);
      expect(Object.getOwnPropertyDescriptor(got, '__proto__')?.value).toEqual({ polluted: true });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
