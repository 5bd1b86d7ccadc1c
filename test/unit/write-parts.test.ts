// Parts of the write tools lifted out of their closure (src/memory/tools/write.ts): saveMemory's
// options and snapshot query, and the rows a save and an edit or patch write.
import { describe, expect, it } from 'vitest';
import type { MemoryEntry } from '../../src/memory/types';
import { isToolError, MAX_VERSION } from '../../src/memory/validate';
import {
  keptResult,
  rewrittenRow,
  saveConversation,
  saveQueryText,
  saveTurn,
  savedRow,
} from '../../src/memory/tools/write';
import { chunk, entryAt, T0, T1 } from './rows';

const entry = (over: Partial<MemoryEntry> = {}): MemoryEntry =>
  entryAt('Travel/Lisbon', {
    content: { hotel: 'Alfama' },
    contextChunks: [chunk('We booked Alfama.')],
    ...over,
  });

const written = {
  content: { hotel: 'Baixa' },
  contextChunks: [chunk('Moved to Baixa.', 4), chunk('It is cheaper.', 5)],
  embedding: new Float32Array([1, 1]),
  model: 'new-model',
  at: T1,
};

describe('saveConversation', () => {
  it('falls back to the latest conversation without options or without an id in them', () => {
    expect(saveConversation(undefined, 4)).toBe(4);
    expect(saveConversation(null, 4)).toBe(4);
    expect(saveConversation({}, 4)).toBe(4);
    expect(saveConversation({}, undefined)).toBeUndefined();
  });

  it('takes the conversation the options name', () => {
    expect(saveConversation({ conversationId: 9 }, 4)).toBe(9);
  });

  it('refuses options that are not an object, and ids that are not whole numbers ≥ 0', () => {
    const notObject = saveConversation('3', 4);
    expect(isToolError(notObject) && notObject.code).toBe('INVALID_ARGUMENT');
    expect(isToolError(notObject) && notObject.message).toMatch(/options must be an object/);
    for (const bad of [-1, 1.5, 'x']) {
      const r = saveConversation({ conversationId: bad }, 4);
      expect(isToolError(r) && r.code).toBe('INVALID_ARGUMENT');
      expect(isToolError(r) && r.message).toMatch(/conversationId/);
    }
  });
});

describe('saveTurn', () => {
  it('is the message the options name, or none', () => {
    expect(saveTurn({ conversationId: 2, turnId: 7 })).toBe(7);
    expect(saveTurn({ turnId: 0 })).toBe(0);
    for (const none of [undefined, null, 3, {}, { turnId: null }]) {
      expect(saveTurn(none)).toBeUndefined();
    }
  });

  it('refuses a turn id that is not a whole number ≥ 0', () => {
    for (const bad of [-1, 1.5, '7', Number.NaN]) {
      const r = saveTurn({ turnId: bad });
      expect(isToolError(r) && r.code).toBe('INVALID_ARGUMENT');
      expect(isToolError(r) && r.message).toMatch(/turnId/);
    }
  });
});

describe('saveQueryText', () => {
  it('is the heading and the first 200 characters of the content', () => {
    const json = JSON.stringify({ note: 'x'.repeat(500) });
    const q = saveQueryText('Travel/Lisbon', json);
    expect(q.startsWith('Lisbon {"note":"xxx')).toBe(true);
    expect(q).toHaveLength('Lisbon '.length + 200);
  });
});

describe('savedRow', () => {
  it('a new entry starts at version 1, created, modified and accessed now', () => {
    const row = savedRow(undefined, 'Travel/Porto', [], written);
    if (isToolError(row)) throw new Error(row.message);
    expect(row).toMatchObject({
      path: 'Travel/Porto',
      heading: 'Porto',
      parent_path: 'Travel',
      content: { hotel: 'Baixa' },
      model: 'new-model',
      version: 1,
      created: T1,
      modified: T1,
      accessed: T1,
    });
    expect(row.id).toBeUndefined();
    expect('movedFrom' in row).toBe(false);
    expect(row.contextChunks).toBe(written.contextChunks);
  });

  it('a save over an entry is its next version: same id, creation and access kept, new snapshot', () => {
    const row = savedRow(entry({ movedFrom: 'Trips/Lisbon' }), 'Travel/Lisbon', [], written);
    if (isToolError(row)) throw new Error(row.message);
    expect(row).toMatchObject({
      id: 7,
      version: 4,
      created: T0,
      accessed: T0,
      modified: T1,
      movedFrom: 'Trips/Lisbon',
      content: { hotel: 'Baixa' },
    });
    expect(row.contextChunks).toBe(written.contextChunks);
    expect('contextVersion' in row).toBe(false);
  });

  it('a new entry where History lists versions goes on above them (a save after a delete)', () => {
    const row = savedRow(undefined, 'Travel/Porto', [2, 4, 1], written);
    if (isToolError(row)) throw new Error(row.message);
    expect(row.version).toBe(5);
  });

  it('refuses to go past the highest version', () => {
    const row = savedRow(entry({ version: MAX_VERSION }), 'Travel/Lisbon', [], written);
    expect(isToolError(row) && row.message).toMatch(/highest version/);
  });
});

describe('rewrittenRow', () => {
  it('takes the re-embedded snapshot when the row is the version it was computed from', () => {
    const row = rewrittenRow(entry(), 3, written);
    if (isToolError(row)) throw new Error(row.message);
    expect(row).toMatchObject({
      id: 7,
      version: 4,
      content: { hotel: 'Baixa' },
      model: 'new-model',
      modified: T1,
      created: T0,
      // The snapshot came from version 3's save.
      contextVersion: 3,
    });
    expect(row.contextChunks).toBe(written.contextChunks);
  });

  it('keeps its own chunks when another write came between, and the older origin of kept ones', () => {
    const fresh = entry({ version: 5, contextVersion: 2 });
    const row = rewrittenRow(fresh, 3, written);
    if (isToolError(row)) throw new Error(row.message);
    expect(row.version).toBe(6);
    expect(row.contextChunks).toBe(fresh.contextChunks);
    expect(row.contextVersion).toBe(2);
  });

  it('names no origin for an empty snapshot', () => {
    const row = rewrittenRow(entry({ contextChunks: [] }), 3, { ...written, contextChunks: [] });
    if (isToolError(row)) throw new Error(row.message);
    expect('contextVersion' in row).toBe(false);
  });

  it('refuses to go past the highest version', () => {
    const row = rewrittenRow(entry({ version: MAX_VERSION }), MAX_VERSION, written);
    expect(isToolError(row) && row.code).toBe('INVALID_ARGUMENT');
  });
});

describe('keptResult', () => {
  it('counts the chunks and tokens the row holds', () => {
    const row = entry({ contextChunks: written.contextChunks, version: 8 });
    expect(keptResult('Travel/Lisbon', row)).toEqual({
      status: 'SUCCESS',
      path: 'Travel/Lisbon',
      version: 8,
      contextTokens: 9,
      chunksStored: 2,
    });
  });
});
