// The explorer's divider shares: read defensively from storage, kept within each side's minimum,
// moved by the keys of the WAI-ARIA window splitter.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SPLIT,
  SPLIT_KEY,
  SPLIT_STEP,
  clampShare,
  loadSplit,
  parseSplit,
  saveSplit,
  shareForKey,
} from '../../src/ui/split-layout';

function memoryStorage(): Storage {
  const map = new Map<string, string>();
  return {
    get length() {
      return map.size;
    },
    clear: () => map.clear(),
    getItem: (k) => map.get(k) ?? null,
    key: (i) => [...map.keys()][i] ?? null,
    removeItem: (k) => void map.delete(k),
    setItem: (k, v) => void map.set(k, String(v)),
  };
}

describe('parseSplit', () => {
  it('reads stored shares', () => {
    expect(parseSplit('{"explorer":0.3,"searching":0.8,"views":0.6}')).toEqual({
      explorer: 0.3,
      searching: 0.8,
      views: 0.6,
    });
    // Stored before the share while searching existed: that one is the default.
    expect(parseSplit('{"explorer":0.3,"views":0.6}')).toEqual({
      explorer: 0.3,
      searching: DEFAULT_SPLIT.searching,
      views: 0.6,
    });
  });

  it('falls back to the default for anything missing, out of range or unreadable', () => {
    expect(parseSplit(null)).toEqual(DEFAULT_SPLIT);
    expect(parseSplit('')).toEqual(DEFAULT_SPLIT);
    expect(parseSplit('not json')).toEqual(DEFAULT_SPLIT);
    expect(parseSplit('[1,2]')).toEqual(DEFAULT_SPLIT);
    expect(parseSplit('"0.4"')).toEqual(DEFAULT_SPLIT);
    expect(parseSplit('{"explorer":1.5,"views":"0.2"}')).toEqual(DEFAULT_SPLIT);
    expect(parseSplit('{"explorer":0,"views":1}')).toEqual(DEFAULT_SPLIT);
    expect(parseSplit('{"explorer":0.7}')).toEqual({ ...DEFAULT_SPLIT, explorer: 0.7 });
    expect(parseSplit('{"__proto__":{"explorer":0.9}}')).toEqual(DEFAULT_SPLIT);
  });
});

describe('loadSplit and saveSplit', () => {
  it('remember the shares under one key', () => {
    const storage = memoryStorage();
    expect(loadSplit(storage)).toEqual(DEFAULT_SPLIT);
    const sizes = { explorer: 0.62, searching: 0.7, views: 0.3 };
    saveSplit(storage, sizes);
    expect(JSON.parse(storage.getItem(SPLIT_KEY)!)).toEqual(sizes);
    expect(loadSplit(storage)).toEqual(sizes);
  });

  it('carry on without storage, or when it refuses', () => {
    expect(loadSplit(undefined)).toEqual(DEFAULT_SPLIT);
    const refusing = {
      getItem(): string | null {
        throw new Error('SecurityError');
      },
      setItem(): void {
        throw new Error('QuotaExceededError');
      },
    };
    expect(loadSplit(refusing)).toEqual(DEFAULT_SPLIT);
    expect(() => saveSplit(refusing, DEFAULT_SPLIT)).not.toThrow();
    expect(() => saveSplit(undefined, DEFAULT_SPLIT)).not.toThrow();
  });
});

describe('clampShare', () => {
  it('keeps both sides at their minimum', () => {
    // 700 px, at least 170 above and 140 below: 0.243 .. 0.8.
    expect(clampShare(0.5, 700, 170, 140)).toBe(0.5);
    expect(clampShare(0.1, 700, 170, 140)).toBeCloseTo(170 / 700);
    expect(clampShare(0.95, 700, 170, 140)).toBeCloseTo(1 - 140 / 700);
  });

  it('gives the first side its minimum when both cannot fit', () => {
    expect(clampShare(0.5, 200, 170, 140)).toBeCloseTo(170 / 200);
    expect(clampShare(0.5, 100, 170, 140)).toBe(1);
  });

  it('leaves the share alone when there is no room to measure, and mends a non-number', () => {
    expect(clampShare(0.42, 0, 170, 140)).toBe(0.42);
    expect(clampShare(Number.NaN, 700, 170, 140)).toBeCloseTo(170 / 700);
  });
});

describe('shareForKey', () => {
  it('moves the divider down with Down and Right, up with Up and Left', () => {
    expect(shareForKey('ArrowDown', 0.5)).toBeCloseTo(0.5 + SPLIT_STEP);
    expect(shareForKey('ArrowRight', 0.5)).toBeCloseTo(0.5 + SPLIT_STEP);
    expect(shareForKey('ArrowUp', 0.5)).toBeCloseTo(0.5 - SPLIT_STEP);
    expect(shareForKey('ArrowLeft', 0.5)).toBeCloseTo(0.5 - SPLIT_STEP);
  });

  it('takes bigger steps with Page Up and Down, and goes to the ends with Home and End', () => {
    expect(shareForKey('PageDown', 0.5)).toBeCloseTo(0.5 + 4 * SPLIT_STEP);
    expect(shareForKey('PageUp', 0.5)).toBeCloseTo(0.5 - 4 * SPLIT_STEP);
    expect(shareForKey('Home', 0.5)).toBe(0);
    expect(shareForKey('End', 0.5)).toBe(1);
  });

  it('ignores other keys', () => {
    for (const key of ['Enter', ' ', 'Tab', 'a', 'Escape'])
      expect(shareForKey(key, 0.5)).toBe(undefined);
  });
});
