// The explorer's splits, each as the share of the upper part of the room it divides: the
// explorer against the entry detail below it (one share while search results are shown, one
// while not), and the tree or map against the search results. Remembered per device
// (localStorage); read defensively, since anything can be stored under the key. Pure but for
// the storage handed in.

/** Shares (0..1) of the two splits, each the upper part's. */
export interface SplitSizes {
  /** Of the memory column's height, what the explorer takes while a detail is shown below it. */
  explorer: number;
  /** The same while search results are shown: the detail yields, so the results have room. */
  searching: number;
  /** Of the explorer's room for the views and the search, what the tree, map or trash takes
   * while search results are shown (the results get the rest). */
  views: number;
}

export const SPLIT_KEY = 'sm-explorer-split';

/**
 * Half and half, so an entry's edit form fits below at 1280×800 with Save in view; once there
 * are search results, most of the column for the explorer and most of the explorer's room for
 * the results (they are what was asked for): at 1280×800 and at 390×844 at least three whole
 * results show above an open entry, whose title and actions stay in view below.
 */
export const DEFAULT_SPLIT: Readonly<SplitSizes> = { explorer: 0.5, searching: 0.8, views: 0.22 };

/** Least height (px) each side of a divider keeps. */
export const MIN_HEIGHT = {
  views: 84,
  search: 110,
  explorer: 170,
  detail: 140,
} as const;

/** How far one arrow key press moves a divider (Page Up/Down: four times as far). */
export const SPLIT_STEP = 0.05;

function share(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 && value < 1
    ? value
    : fallback;
}

/** Sizes from what was stored (a JSON string, or null): anything unreadable is the default. */
export function parseSplit(raw: string | null | undefined): SplitSizes {
  let stored: unknown;
  try {
    stored = raw ? JSON.parse(raw) : undefined;
  } catch {
    stored = undefined;
  }
  const o = stored && typeof stored === 'object' ? (stored as Record<string, unknown>) : {};
  return {
    explorer: share(o.explorer, DEFAULT_SPLIT.explorer),
    searching: share(o.searching, DEFAULT_SPLIT.searching),
    views: share(o.views, DEFAULT_SPLIT.views),
  };
}

/** The stored sizes; the defaults where storage is missing or refuses (private mode). */
export function loadSplit(storage: Pick<Storage, 'getItem'> | undefined): SplitSizes {
  try {
    return parseSplit(storage?.getItem(SPLIT_KEY));
  } catch {
    return { ...DEFAULT_SPLIT };
  }
}

/** Stores the sizes; a full or refused storage only means they are not remembered. */
export function saveSplit(storage: Pick<Storage, 'setItem'> | undefined, sizes: SplitSizes): void {
  try {
    storage?.setItem(SPLIT_KEY, JSON.stringify(sizes));
  } catch {
    // Not remembered this time; the layout itself is unaffected.
  }
}

/**
 * `share` of `total` px moved within bounds, so that the first part keeps at least `minFirst`
 * px and the second at least `minSecond` (when both cannot, the first gets its minimum).
 */
export function clampShare(
  share: number,
  total: number,
  minFirst: number,
  minSecond: number,
): number {
  if (!(total > 0)) return share;
  const lo = Math.min(1, minFirst / total);
  const hi = Math.max(lo, 1 - minSecond / total);
  return Math.min(hi, Math.max(lo, Number.isFinite(share) ? share : lo));
}

/**
 * The upper part's share after a key on a divider (a down arrow moves it down), or undefined
 * for a key that does not move it. Home and End go to the ends; `clampShare` keeps the minimums.
 */
export function shareForKey(key: string, share: number): number | undefined {
  switch (key) {
    case 'ArrowUp':
    case 'ArrowLeft':
      return share - SPLIT_STEP;
    case 'ArrowDown':
    case 'ArrowRight':
      return share + SPLIT_STEP;
    case 'PageUp':
      return share - 4 * SPLIT_STEP;
    case 'PageDown':
      return share + 4 * SPLIT_STEP;
    case 'Home':
      return 0;
    case 'End':
      return 1;
    default:
      return undefined;
  }
}
