import { describe, expect, it } from 'vitest';
import {
  descendantRange,
  headingOf,
  isSelfOrDescendant,
  parentOf,
  parsePath,
} from '../../src/memory/paths';
import { segmentOf } from '../../src/memory/imports/names';

const ok = (p: unknown, allowRoot = false) => {
  const r = parsePath(p, { allowRoot });
  if (!r.ok) throw new Error(r.message);
  return r.path;
};
const bad = (p: unknown) => {
  const r = parsePath(p);
  expect(r.ok).toBe(false);
  return r.ok ? '' : r.message;
};
/** As `bad` and `ok`, for a path that names an entry anew (a save, a move's destination). */
const badName = (p: unknown) => {
  const r = parsePath(p, { naming: true });
  expect(r.ok).toBe(false);
  return r.ok ? '' : r.message;
};
const named = (p: string) => {
  const r = parsePath(p, { naming: true });
  if (!r.ok) throw new Error(r.message);
  return r.path;
};

describe('paths', () => {
  it('trims segments, drops a leading/trailing slash and NFC-normalises', () => {
    expect(ok(' A / B ')).toBe('A/B');
    expect(ok('/A/B/')).toBe('A/B');
    expect(ok('Caf\u0065\u0301/x')).toBe('Caf\u00e9/x');
    expect(ok('a/B')).not.toBe(ok('A/B'));
  });

  it('rejects bad paths with a reason', () => {
    expect(bad('A//B')).toMatch(/empty segment/);
    expect(bad('A/./B')).toMatch(/not allowed/);
    expect(bad('../x')).toMatch(/not allowed/);
    expect(bad('A/\u0007')).toMatch(/control/);
    expect(bad('x'.repeat(129))).toMatch(/128/);
    expect(bad(Array(13).fill('a').join('/'))).toMatch(/12/);
    expect(bad(Array(6).fill('x'.repeat(100)).join('/'))).toMatch(/512/);
    expect(bad(42)).toMatch(/string/);
    expect(bad('')).toMatch(/empty/);
    expect(bad('/')).toMatch(/empty/);
  });

  it('refuses invisible and bidirectional characters in a new name, naming them', () => {
    expect(badName('No\u200btes')).toMatch(/invisible character \(U\+200B\)/);
    expect(badName('A/\u2060B')).toMatch(/U\+2060/);
    expect(badName('A\ufeffB')).toMatch(/U\+FEFF/);
    for (const ch of ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067']) {
      expect(badName(`A/B${ch}C`)).toMatch(/bidirectional control character/);
    }
    expect(badName('A/\u2068B\u2069')).toMatch(/U\+2068/);
    expect(badName('A\u200eB')).toMatch(/U\+200E/);
    expect(badName('A\u200fB')).toMatch(/U\+200F/);
    expect(badName('\u202eABC')).toMatch(/U\+202E/);
    // A joiner where no word needs one: between Latin letters, by a space, at an end, doubled.
    expect(badName('Go\u200dals')).toMatch(/invisible character \(U\+200D\)/);
    expect(badName('Go\u200cals')).toMatch(/U\+200C/);
    expect(badName('Caf\u00e9\u200d\u00e9')).toMatch(/U\+200D/);
    expect(badName('\u200dA')).toMatch(/U\+200D/);
    expect(badName('کتاب\u200c')).toMatch(/U\+200C/);
    expect(badName('کتاب \u200cها')).toMatch(/U\+200C/);
    // A BOM at a segment's ends is trimmed as whitespace, as it always was.
    expect(named('\ufeffA/B')).toBe('A/B');
  });

  it('keeps the joiners that words and emoji need', () => {
    expect(named('Books/کتاب\u200cها')).toBe('Books/کتاب\u200cها'); // Persian
    expect(named('क्\u200dष')).toBe('क्\u200dष'); // Devanagari half form
    expect(named('\u{1F469}\u200d\u{1F4BB} Work')).toBe('\u{1F469}\u200d\u{1F4BB} Work'); // emoji
    expect(named('\u{1F3C3}\u200d\u2640\ufe0f')).toBe('\u{1F3C3}\u200d\u2640\ufe0f');
  });

  it('reads a path stored with such characters before they were refused, without changing it', () => {
    expect(ok('Project/No\u200btes')).toBe('Project/No\u200btes');
    expect(ok('Project/\u202esetoN')).toBe('Project/\u202esetoN');
  });

  it('names made from other tools’ items lose the characters a new name may not hold', () => {
    expect(segmentOf('No\u200btes \u202eabc\u202c', 'x')).toBe('Notes abc');
    expect(segmentOf('Go\u200dals', 'x')).toBe('Goals');
    expect(segmentOf('کتاب\u200cها', 'x')).toBe('کتاب\u200cها');
    expect(named(segmentOf('\u2066\u200b', 'Untitled'))).toBe('Untitled');
  });

  it('accepts the root only where a heading is meant', () => {
    expect(ok('', true)).toBe('');
    expect(ok('/', true)).toBe('');
  });

  it('splits heading and parent', () => {
    expect(headingOf('A/B/C')).toBe('C');
    expect(parentOf('A/B/C')).toBe('A/B');
    expect(parentOf('A')).toBe('');
  });

  it('descendant ranges are segment-aware', () => {
    const [lo, hi] = descendantRange('User/Pref');
    const inRange = (p: string) => p >= lo && p < hi;
    expect(inRange('User/Pref/Color')).toBe(true);
    expect(inRange('User/Pref/\uffff')).toBe(true);
    expect(inRange('User/Preferences/Color')).toBe(false);
    expect(inRange('User/Pref')).toBe(false);
    expect(inRange('User/Pref0')).toBe(false);
    expect(inRange('User/Pref.x')).toBe(false);
    expect(isSelfOrDescendant('User/Preferences', 'User/Pref')).toBe(false);
    expect(isSelfOrDescendant('User/Pref/a', 'User/Pref')).toBe(true);
  });
});
