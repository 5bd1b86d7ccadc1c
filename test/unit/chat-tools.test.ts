// Which tool outcomes count as a write to saved memory (changedMemory): what a turn reports as
// `wrote`, for work that runs after an exchange in which the model saved nothing; and arguments
// too large to read (runToolCall).
import { describe, expect, it } from 'vitest';
import {
  MEMORY_TOOLS,
  MEMORY_WRITERS,
  changedMemory,
  runToolCall,
  type ToolOutcome,
} from '../../src/chat/tools';
import type { MemoryApi } from '../../src/memory/types';

const ran = (name: string, result: unknown, refused = false): ToolOutcome => ({
  name,
  args: {},
  result,
  refused,
});

describe('changedMemory', () => {
  it.each([...MEMORY_WRITERS])('%s that succeeded is a write', (name) => {
    expect(changedMemory(ran(name, { status: 'SUCCESS', path: 'A/B' }))).toBe(true);
  });

  it.each([
    ['a read', ran('queryMemory', { status: 'SUCCESS', path: 'A/B' })],
    ['a listing', ran('listMemory', { status: 'SUCCESS', tree: [] })],
    ['a save the engine refused', ran('saveMemory', { status: 'ERROR', code: 'INVALID_PATH' })],
    ['a delete of nothing', ran('deleteMemory', { status: 'NOT_FOUND', path: 'A' })],
    ['a call refused before running', ran('saveMemory', { status: 'ERROR' }, true)],
    ['a result that is no object', ran('saveMemory', 'SUCCESS')],
    ['no result', ran('moveMemory', undefined)],
  ])('%s is not', (_what, outcome) => {
    expect(changedMemory(outcome)).toBe(false);
  });

  it('names the four tools that write', () => {
    expect([...MEMORY_WRITERS].sort()).toEqual([
      'deleteMemory',
      'moveMemory',
      'saveMemory',
      'updateMemory',
    ]);
  });
});

describe('runToolCall', () => {
  it('listMemory called with "path", as the other tools name it, lists that heading', async () => {
    const asked: unknown[] = [];
    const memory = {
      listMemory: (root: unknown) => {
        asked.push(root);
        return Promise.resolve({ status: 'SUCCESS', tree: {}, totalEntries: 0 });
      },
    } as unknown as MemoryApi;
    const list = (args: object) =>
      runToolCall(
        {
          id: 'c1',
          type: 'function',
          function: { name: 'listMemory', arguments: JSON.stringify(args) },
        },
        MEMORY_TOOLS,
        memory,
        { contextTokens: 1000, recencyBias: 0.3 },
      );
    await list({ path: 'User' });
    await list({ rootPath: 'Project', path: 'User' });
    await list({});
    expect(asked).toEqual(['User', 'Project', '']);
  });

  it('refuses arguments over the size cap unread: nothing runs, and only their start is kept', async () => {
    let ran = 0;
    const memory = {
      listMemory: () => {
        ran++;
        return Promise.resolve({ status: 'SUCCESS', tree: [], totalEntries: 0 });
      },
    } as unknown as MemoryApi;
    // Valid JSON the tool would take, padded past any real call's size.
    const args = `{"rootPath": ""${' '.repeat(200 * 1024)}}`;
    const call = {
      id: 'c1',
      type: 'function' as const,
      function: { name: 'listMemory', arguments: args },
    };
    const outcome = await runToolCall(call, MEMORY_TOOLS, memory, {
      contextTokens: 1000,
      recencyBias: 0.3,
    });
    expect(ran).toBe(0);
    expect(outcome).toMatchObject({
      refused: true,
      result: {
        status: 'ERROR',
        code: 'CONTENT_TOO_LARGE',
        message: expect.stringMatching(/^The arguments of listMemory are 200 KB, .*at most 128 KB/),
      },
    });
    expect(typeof outcome.args).toBe('string');
    expect((outcome.args as string).length).toBeLessThan(2000);
  });

  it('a name that differs only in case, "_" or "-" runs that tool, and counts as its write', async () => {
    const saved: unknown[] = [];
    const memory = {
      saveMemory: (path: unknown, content: unknown) => {
        saved.push([path, content]);
        return Promise.resolve({ status: 'SUCCESS', path });
      },
    } as unknown as MemoryApi;
    for (const name of ['save_memory', 'SaveMemory', 'save-memory', 'SAVEMEMORY']) {
      const outcome = await runToolCall(
        {
          id: 'c1',
          type: 'function',
          function: { name, arguments: '{"path": "Family/Ana", "content": "Lisbon"}' },
        },
        MEMORY_TOOLS,
        memory,
        { contextTokens: 1000, recencyBias: 0.3 },
      );
      expect(outcome).toMatchObject({ name: 'saveMemory', refused: false });
      expect(changedMemory(outcome)).toBe(true);
    }
    expect(saved).toHaveLength(4);
    expect(saved[0]).toEqual(['Family/Ana', 'Lisbon']);
  });
});
