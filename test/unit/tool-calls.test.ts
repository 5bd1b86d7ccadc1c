import { describe, expect, it } from 'vitest';
import { createToolCallAccumulator, makeCallId } from '../../src/llm/tool-calls';

const MADE_UP = /^call_[0-9a-f]{16}$/;

describe('createToolCallAccumulator', () => {
  it('concatenates argument pieces keyed by index (llama.cpp, vLLM)', () => {
    const acc = createToolCallAccumulator();
    acc.add([
      {
        index: 0,
        id: 'call_1',
        type: 'function',
        function: { name: 'saveMemory', arguments: '' },
      },
    ]);
    acc.add([{ index: 0, function: { arguments: '{"path":' } }]);
    acc.add([{ index: 0, function: { arguments: '"A"}' } }]);
    expect(acc.calls()).toEqual([
      {
        id: 'call_1',
        type: 'function',
        function: { name: 'saveMemory', arguments: '{"path":"A"}' },
      },
    ]);
  });

  it('keeps parallel calls apart and returns them in index order', () => {
    const acc = createToolCallAccumulator();
    acc.add([{ index: 1, id: 'b', function: { name: 'listMemory', arguments: '' } }]);
    acc.add([{ index: 0, id: 'a', function: { name: 'queryMemory', arguments: '{"q":' } }]);
    acc.add([
      { index: 1, function: { arguments: '{}' } },
      { index: 0, function: { arguments: '1}' } },
    ]);
    expect(acc.calls().map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ['a', 'queryMemory', '{"q":1}'],
      ['b', 'listMemory', '{}'],
    ]);
  });

  it('takes a whole call from one delta (Ollama)', () => {
    const acc = createToolCallAccumulator();
    acc.add([
      {
        id: 'call_x',
        index: 0,
        type: 'function',
        function: { name: 'queryMemory', arguments: '{"query":"tea"}' },
      },
    ]);
    expect(acc.calls()[0]?.function).toEqual({
      name: 'queryMemory',
      arguments: '{"query":"tea"}',
    });
  });

  it("follows KoboldCPP's fake stream: name with empty arguments, then the whole string", () => {
    const acc = createToolCallAccumulator();
    acc.add([
      { id: 'call_48213', type: 'function', function: { name: 'saveMemory', arguments: '' } },
    ]);
    acc.add([{ function: { arguments: '{"path": "A", "content": "b"}' } }]);
    expect(acc.calls()).toEqual([
      {
        id: 'call_48213',
        type: 'function',
        function: { name: 'saveMemory', arguments: '{"path": "A", "content": "b"}' },
      },
    ]);
  });

  it('without index, a new name starts a new call', () => {
    const acc = createToolCallAccumulator();
    acc.add([{ function: { name: 'a', arguments: '{"x":1}' } }]);
    acc.add([{ function: { name: 'a', arguments: '{"x":2}' } }]);
    acc.add([{ function: { name: 'b' } }, { function: { arguments: '{}' } }]);
    expect(acc.calls().map((c) => [c.function.name, c.function.arguments])).toEqual([
      ['a', '{"x":1}'],
      ['a', '{"x":2}'],
      ['b', '{}'],
    ]);
  });

  it('without index, a piece with a known id continues that call', () => {
    const acc = createToolCallAccumulator();
    acc.add([{ id: 'p', function: { name: 'a', arguments: '{"x":' } }]);
    acc.add([{ id: 'q', function: { name: 'b', arguments: '{}' } }]);
    acc.add([{ id: 'p', function: { arguments: '1}' } }]);
    expect(acc.calls().map((c) => [c.id, c.function.arguments])).toEqual([
      ['p', '{"x":1}'],
      ['q', '{}'],
    ]);
  });

  it('makes up unique ids for missing, empty or repeated ids, and keeps them stable', () => {
    const acc = createToolCallAccumulator();
    acc.add([
      { index: 0, id: '', function: { name: 'a', arguments: '{}' } },
      { index: 1, function: { name: 'b', arguments: '{}' } },
      { index: 2, id: 'same', function: { name: 'c', arguments: '{}' } },
      { index: 3, id: 'same', function: { name: 'd', arguments: '{}' } },
    ]);
    const first = acc.calls();
    const ids = first.map((c) => c.id);
    expect(ids[0]).toMatch(MADE_UP);
    expect(ids[1]).toMatch(MADE_UP);
    expect(ids[2]).toBe('same');
    expect(ids[3]).toMatch(MADE_UP);
    expect(new Set(ids).size).toBe(4);
    expect(acc.calls().map((c) => c.id)).toEqual(ids);
  });

  it('stringifies arguments sent as an object, and reads missing arguments as {}', () => {
    const acc = createToolCallAccumulator();
    acc.add([{ index: 0, function: { name: 'a', arguments: { path: 'A', n: 1 } } }]);
    acc.add([{ index: 1, function: { name: 'b' } }]);
    expect(acc.calls().map((c) => c.function.arguments)).toEqual(['{"path":"A","n":1}', '{}']);
  });

  it('drops entries that never got a function name and ignores junk', () => {
    const acc = createToolCallAccumulator();
    acc.add([{ index: 0, function: { arguments: '{}' } }]);
    acc.add(null);
    acc.add('nonsense');
    acc.add([42, null, { index: 'x' }]);
    acc.add({ index: 1, function: { name: '  ' } });
    expect(acc.calls()).toEqual([]);
  });

  it('keeps the first name when a server repeats it', () => {
    const acc = createToolCallAccumulator();
    acc.add([{ index: 0, function: { name: 'saveMemory', arguments: '{"a":' } }]);
    acc.add([{ index: 0, function: { name: 'saveMemory', arguments: '1}' } }]);
    expect(acc.calls()[0]?.function).toEqual({ name: 'saveMemory', arguments: '{"a":1}' });
  });
});

describe('makeCallId', () => {
  it('makes call_ ids that do not repeat', () => {
    const ids = new Set(Array.from({ length: 1000 }, makeCallId));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(MADE_UP);
  });
});
