// Which tool outcomes count as a write to saved memory (changedMemory): what a turn reports as
// `wrote`, for work that runs after an exchange in which the model saved nothing.
import { describe, expect, it } from 'vitest';
import { MEMORY_WRITERS, changedMemory, type ToolOutcome } from '../../src/chat/tools';

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
