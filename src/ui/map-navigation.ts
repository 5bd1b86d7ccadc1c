// Keyboard movement on the memory map: from one block to the nearest block in the direction of
// an arrow key, the way the eye reads a treemap. Pure: works on rectangles only.

/** A block's rectangle, in the map's layout units. */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export type Direction = 'left' | 'right' | 'up' | 'down';

const ARROWS: Record<string, Direction> = {
  ArrowLeft: 'left',
  ArrowRight: 'right',
  ArrowUp: 'up',
  ArrowDown: 'down',
};

/** The direction of an arrow key, or undefined for any other key. */
export function arrowDirection(key: string): Direction | undefined {
  return ARROWS[key];
}

/** Length of the gap between [a0, a1] and [b0, b1]; 0 when they overlap or touch. */
function gap(a0: number, a1: number, b0: number, b1: number): number {
  return Math.max(0, b0 - a1, a0 - b1);
}

/**
 * Index of the block to move to from `boxes[from]` in `direction`, or -1 when none lies that way.
 *
 * Blocks wholly beyond the current one's edge in that direction come first; only when there are
 * none (nested blocks overlap) is a block whose centre lies beyond the current centre taken.
 * Among them the nearest wins: the gap to cross in the direction counts once, a sideways gap
 * (the block is not level with the current one) ten times, so moving right keeps to the same row
 * when a block is there; ties go to the one whose centre is most nearly in line.
 */
export function nextInDirection(boxes: readonly Box[], from: number, direction: Direction): number {
  if (!boxes[from]) return boxes.length ? 0 : -1;
  const beyond = nearest(boxes, from, direction, true);
  return beyond >= 0 ? beyond : nearest(boxes, from, direction, false);
}

function nearest(
  boxes: readonly Box[],
  from: number,
  direction: Direction,
  wholly: boolean,
): number {
  const a = boxes[from];
  const horizontal = direction === 'left' || direction === 'right';
  const sign = direction === 'right' || direction === 'down' ? 1 : -1;
  const acx = a.x + a.w / 2;
  const acy = a.y + a.h / 2;
  let best = -1;
  let bestScore = Infinity;
  for (let i = 0; i < boxes.length; i++) {
    if (i === from) continue;
    const b = boxes[i];
    const bcx = b.x + b.w / 2;
    const bcy = b.y + b.h / 2;
    if (wholly) {
      // Its near edge at or past this one's far edge (half a pixel of rounding allowed).
      const past =
        direction === 'right'
          ? b.x - (a.x + a.w)
          : direction === 'left'
            ? a.x - (b.x + b.w)
            : direction === 'down'
              ? b.y - (a.y + a.h)
              : a.y - (b.y + b.h);
      if (past < -0.5) continue;
    }
    const ahead = horizontal ? (bcx - acx) * sign : (bcy - acy) * sign;
    if (ahead <= 0.5) continue;
    const along = horizontal
      ? gap(a.x, a.x + a.w, b.x, b.x + b.w)
      : gap(a.y, a.y + a.h, b.y, b.y + b.h);
    const aside = horizontal
      ? gap(a.y, a.y + a.h, b.y, b.y + b.h)
      : gap(a.x, a.x + a.w, b.x, b.x + b.w);
    const offLine = horizontal ? Math.abs(bcy - acy) : Math.abs(bcx - acx);
    const score = along + 10 * aside + 0.01 * offLine + 0.001 * ahead;
    if (score < bestScore) {
      bestScore = score;
      best = i;
    }
  }
  return best;
}
