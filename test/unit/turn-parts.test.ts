// Parts of recordTurn lifted out of its closure (src/memory/tools/turns.ts): its arguments
// checked, and the index rows of a turn's sentences.
import { describe, expect, it } from 'vitest';
import { turnArgs, turnChunks } from '../../src/memory/tools/turns';
import { isToolError } from '../../src/memory/validate';

describe('turnArgs', () => {
  it('takes a conversation, a role and text, and a message id when one is given', () => {
    expect(turnArgs({ conversationId: 3, role: 'user', text: 'hi' })).toEqual({
      conversationId: 3,
      givenTurn: -1,
    });
    expect(turnArgs({ conversationId: 0, role: 'tool', text: '', turnId: 12 })).toEqual({
      conversationId: 0,
      givenTurn: 12,
    });
  });

  it('refuses what a confused caller sends, saying which argument is wrong', () => {
    const cases: [unknown, RegExp][] = [
      [null, /needs \{ conversationId, role, text \}/],
      ['turn', /needs \{ conversationId, role, text \}/],
      [{ role: 'user', text: 'x' }, /conversationId is required/],
      [{ conversationId: -2, role: 'user', text: 'x' }, /conversationId/],
      [{ conversationId: 1, role: 'narrator', text: 'x' }, /role must be one of user, assistant/],
      [{ conversationId: 1, role: 'user', text: 42 }, /text must be a string, got 42/],
      [{ conversationId: 1, role: 'user', text: 'x', turnId: 0 }, /turnId/],
      [{ conversationId: 1, role: 'user', text: 'x', turnId: 2.5 }, /turnId/],
    ];
    for (const [arg, message] of cases) {
      const r = turnArgs(arg as Parameters<typeof turnArgs>[0]);
      expect(isToolError(r) && r.code, JSON.stringify(arg)).toBe('INVALID_ARGUMENT');
      expect(isToolError(r) && r.message, JSON.stringify(arg)).toMatch(message);
    }
  });
});

describe('turnChunks', () => {
  it('one row per sentence, numbered in order, with its tokens and vector', () => {
    const at = new Date('2026-05-01T00:00:00Z');
    const v = [new Float32Array([1, 0]), new Float32Array([0, 1])];
    const rows = turnChunks(
      { conversationId: 4, turnId: 17, role: 'assistant', at },
      ['First one.', 'Second one.'],
      [3, 4],
      v,
      'model-a',
    );
    expect(rows).toEqual([
      {
        conversationId: 4,
        turnId: 17,
        sentenceId: 0,
        role: 'assistant',
        text: 'First one.',
        tokenCount: 3,
        embedding: v[0],
        model: 'model-a',
        time: at,
      },
      {
        conversationId: 4,
        turnId: 17,
        sentenceId: 1,
        role: 'assistant',
        text: 'Second one.',
        tokenCount: 4,
        embedding: v[1],
        model: 'model-a',
        time: at,
      },
    ]);
    expect(turnChunks({ conversationId: 4, turnId: 1, role: 'user', at }, [], [], [], '')).toEqual(
      [],
    );
  });
});
