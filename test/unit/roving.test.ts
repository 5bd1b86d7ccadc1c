// Which key goes where in a list that is one Tab stop (src/ui/roving.ts): the chat's messages and
// the chat list. Past either end the focus stays; Home and End go to the ends on both axes.
import { describe, expect, it } from 'vitest';
import { stepIndex, stepOf } from '../../src/ui/roving';

describe('stepOf', () => {
  it('reads ↑ ↓ on a vertical list and ← → on a row, Home and End on both', () => {
    expect(stepOf('ArrowUp', 'vertical')).toBe('previous');
    expect(stepOf('ArrowDown', 'vertical')).toBe('next');
    expect(stepOf('ArrowLeft', 'vertical')).toBeUndefined();
    expect(stepOf('ArrowLeft', 'horizontal')).toBe('previous');
    expect(stepOf('ArrowRight', 'horizontal')).toBe('next');
    expect(stepOf('ArrowUp', 'horizontal')).toBeUndefined();
    for (const axis of ['vertical', 'horizontal'] as const) {
      expect(stepOf('Home', axis)).toBe('first');
      expect(stepOf('End', axis)).toBe('last');
      expect(stepOf('Enter', axis)).toBeUndefined();
    }
  });
});

describe('stepIndex', () => {
  it('goes to a neighbour, or to an end', () => {
    expect(stepIndex('next', 1, 4)).toBe(2);
    expect(stepIndex('previous', 1, 4)).toBe(0);
    expect(stepIndex('first', 3, 4)).toBe(0);
    expect(stepIndex('last', 0, 4)).toBe(3);
  });

  it('stays put past either end, and in an empty list', () => {
    expect(stepIndex('next', 3, 4)).toBeUndefined();
    expect(stepIndex('previous', 0, 4)).toBeUndefined();
    expect(stepIndex('first', -1, 0)).toBeUndefined();
    expect(stepIndex('last', -1, 0)).toBeUndefined();
  });

  it('from outside the list (-1), next is the first', () => {
    expect(stepIndex('next', -1, 3)).toBe(0);
  });
});
