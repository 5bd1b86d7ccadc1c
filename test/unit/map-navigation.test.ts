// Arrow keys on the memory map: from a block to the nearest block that way, as the eye reads it.
import { describe, expect, it } from 'vitest';
import { arrowDirection, nextInDirection, type Box } from '../../src/ui/map-navigation';

/**
 * A 3 × 2 grid with one tall block on the right:
 *
 *   [0 A ][1 B ][     ]
 *   [2 C ][3 D ][4 E  ]
 *   [5 F       ][     ]
 */
const GRID: Box[] = [
  { x: 0, y: 0, w: 10, h: 10 },
  { x: 10, y: 0, w: 10, h: 10 },
  { x: 0, y: 10, w: 10, h: 10 },
  { x: 10, y: 10, w: 10, h: 10 },
  { x: 20, y: 0, w: 10, h: 30 },
  { x: 0, y: 20, w: 20, h: 10 },
];

describe('arrowDirection', () => {
  it('names the four arrows and nothing else', () => {
    expect(arrowDirection('ArrowLeft')).toBe('left');
    expect(arrowDirection('ArrowRight')).toBe('right');
    expect(arrowDirection('ArrowUp')).toBe('up');
    expect(arrowDirection('ArrowDown')).toBe('down');
    expect(arrowDirection('Enter')).toBe(undefined);
    expect(arrowDirection('Left')).toBe(undefined);
  });
});

describe('nextInDirection', () => {
  it('moves to the neighbour on the same row or column', () => {
    expect(nextInDirection(GRID, 0, 'right')).toBe(1);
    expect(nextInDirection(GRID, 1, 'right')).toBe(4);
    expect(nextInDirection(GRID, 0, 'down')).toBe(2);
    expect(nextInDirection(GRID, 2, 'down')).toBe(5);
    expect(nextInDirection(GRID, 3, 'left')).toBe(2);
    expect(nextInDirection(GRID, 3, 'up')).toBe(1);
  });

  it('from a big block, to the neighbour most nearly in line', () => {
    // D overlaps F's columns (it is above F, not to its right): right from F is E.
    // E spans all three rows; its centre is level with the middle row.
    expect(nextInDirection(GRID, 4, 'left')).toBe(3);
    // F spans two columns: up goes to one of the two above it.
    expect([2, 3]).toContain(nextInDirection(GRID, 5, 'up'));
    expect(nextInDirection(GRID, 5, 'right')).toBe(4);
  });

  it('between nested blocks (a heading block under its entries), by centres', () => {
    const boxes: Box[] = [
      { x: 0, y: 0, w: 40, h: 20 },
      { x: 2, y: 2, w: 10, h: 10 },
      { x: 20, y: 2, w: 10, h: 10 },
    ];
    // Nothing lies wholly right of the big block; the inner one whose centre is right of its centre.
    expect(nextInDirection(boxes, 0, 'right')).toBe(2);
    expect(nextInDirection(boxes, 1, 'right')).toBe(2);
  });

  it('stops at the edge', () => {
    expect(nextInDirection(GRID, 0, 'left')).toBe(-1);
    expect(nextInDirection(GRID, 0, 'up')).toBe(-1);
    expect(nextInDirection(GRID, 4, 'right')).toBe(-1);
    expect(nextInDirection(GRID, 5, 'down')).toBe(-1);
  });

  it('prefers a block level with this one over a nearer one off to the side', () => {
    const boxes: Box[] = [
      { x: 0, y: 0, w: 10, h: 10 },
      // Right next to it, but wholly below its row.
      { x: 11, y: 15, w: 10, h: 10 },
      // Farther, but on the same row.
      { x: 30, y: 0, w: 10, h: 10 },
    ];
    expect(nextInDirection(boxes, 0, 'right')).toBe(2);
  });

  it('reaches every block of a grid by arrows alone', () => {
    const seen = new Set<number>([0]);
    const queue = [0];
    while (queue.length) {
      const at = queue.shift()!;
      for (const d of ['left', 'right', 'up', 'down'] as const) {
        const next = nextInDirection(GRID, at, d);
        if (next >= 0 && !seen.has(next)) {
          seen.add(next);
          queue.push(next);
        }
      }
    }
    expect(seen.size).toBe(GRID.length);
  });

  it('starts at the first block when there is no current one', () => {
    expect(nextInDirection(GRID, -1, 'right')).toBe(0);
    expect(nextInDirection([], -1, 'right')).toBe(-1);
    expect(nextInDirection([], 0, 'right')).toBe(-1);
  });
});
