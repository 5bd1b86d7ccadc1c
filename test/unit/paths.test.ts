import { describe, expect, it } from 'vitest';
import {
  descendantRange,
  headingOf,
  isSelfOrDescendant,
  parentOf,
  parsePath,
} from '../../src/memory/paths';

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
