// The rules every way in shares (validate.ts): content and merge patches keep every key,
// `__proto__` included, without touching Object.prototype; versions, dates, chunks and message
// parts are checked the same for the tools, Markdown import and the JSON backup.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../src/memory/types';
import {
  MAX_DATE_MS,
  MAX_VERSION,
  MIN_DATE_MS,
  chunkProblems,
  dateProblem,
  getOwn,
  isToolError,
  mergePatch,
  nextVersion,
  setOwn,
  validateContent,
  validateMessageParts,
  versionProblem,
} from '../../src/memory/validate';

const PROTO = '{"__proto__":{"polluted":true},"b":1}';

afterEach(() => {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

/** A JSON value as JSON.parse builds it (so `__proto__` is an own key). */
const parse = (json: string) => JSON.parse(json) as JsonValue;

describe('keys named __proto__ are ordinary keys', () => {
  it('validateContent copies them', () => {
    const r = validateContent(parse(`{"a":[${PROTO}],"__proto__":${PROTO}}`));
    expect(!isToolError(r) && JSON.stringify(r.value)).toBe(
      `{"a":[${PROTO}],"__proto__":${PROTO}}`,
    );
    expect(!isToolError(r) && Object.getPrototypeOf(r.value)).toBe(Object.prototype);
  });

  it('setOwn and getOwn never reach the prototype', () => {
    const o: Record<string, unknown> = {};
    expect(getOwn(o, '__proto__')).toBeUndefined();
    expect(getOwn(o, 'toString')).toBeUndefined();
    setOwn(o, '__proto__', { polluted: true });
    expect(Object.keys(o)).toEqual(['__proto__']);
    expect(getOwn(o, '__proto__')).toEqual({ polluted: true });
    expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
  });

  it('mergePatch follows RFC 7396 for them too', () => {
    expect(JSON.stringify(mergePatch(parse('{"a":1}'), parse('{"__proto__":{"x":1}}')))).toBe(
      '{"a":1,"__proto__":{"x":1}}',
    );
    expect(
      JSON.stringify(mergePatch(parse(PROTO), parse('{"__proto__":{"polluted":null,"y":2}}'))),
    ).toBe('{"__proto__":{"y":2},"b":1}');
    expect(JSON.stringify(mergePatch(parse(PROTO), parse('{"__proto__":null}')))).toBe('{"b":1}');
    expect(JSON.stringify(mergePatch(parse('{}'), parse('{"constructor":{"a":1}}')))).toBe(
      '{"constructor":{"a":1}}',
    );
  });

  it('mergePatch keeps the RFC 7396 examples', () => {
    const cases: [string, string, string][] = [
      ['{"a":"b"}', '{"a":"c"}', '{"a":"c"}'],
      ['{"a":"b"}', '{"b":"c"}', '{"a":"b","b":"c"}'],
      ['{"a":"b"}', '{"a":null}', '{}'],
      ['{"a":"b","b":"c"}', '{"a":null}', '{"b":"c"}'],
      ['{"a":["b"]}', '{"a":"c"}', '{"a":"c"}'],
      ['{"a":"c"}', '{"a":["b"]}', '{"a":["b"]}'],
      ['{"a":{"b":"c"}}', '{"a":{"b":"d","c":null}}', '{"a":{"b":"d"}}'],
      ['{"a":[{"b":"c"}]}', '{"a":[1]}', '{"a":[1]}'],
      ['["a","b"]', '["c","d"]', '["c","d"]'],
      ['{"a":"b"}', '["c"]', '["c"]'],
      ['{"a":"foo"}', 'null', 'null'],
      ['{"a":"foo"}', '"bar"', '"bar"'],
      ['{"e":null}', '{"a":1}', '{"e":null,"a":1}'],
      ['[1,2]', '{"a":"b","c":null}', '{"a":"b"}'],
      ['{}', '{"a":{"bb":{"ccc":null}}}', '{"a":{"bb":{}}}'],
    ];
    for (const [target, patch, result] of cases) {
      expect(JSON.stringify(mergePatch(parse(target), parse(patch))), patch).toBe(result);
    }
  });

  it('mergePatch leaves its arguments alone', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (target, patch) => {
        const [t, p] = [JSON.stringify(target), JSON.stringify(patch)];
        mergePatch(target as JsonValue, patch as JsonValue);
        expect([JSON.stringify(target), JSON.stringify(patch)]).toEqual([t, p]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('stored values', () => {
  it('versions are whole numbers from 1 to 2^53 - 1, and never go past it', () => {
    for (const v of [1, 2, MAX_VERSION]) expect(versionProblem(v)).toBeNull();
    for (const v of [0, -1, 1.5, MAX_VERSION + 1, 1e300, NaN, '1', null, undefined])
      expect(versionProblem(v)).toMatch(/^version must be a whole number from 1 to /);
    expect(nextVersion(1, 'A')).toBe(2);
    expect(nextVersion(MAX_VERSION - 1, 'A')).toBe(MAX_VERSION);
    const top = nextVersion(MAX_VERSION, 'A');
    expect(isToolError(top) && top.code).toBe('INVALID_ARGUMENT');
    expect(isToolError(top) && top.message).toMatch(/^"A" is at version 9007199254740991/);
  });

  it('dates run from year 0000 to 9999, as four-digit ISO years', () => {
    expect(new Date(MIN_DATE_MS).toISOString()).toBe('0000-01-01T00:00:00.000Z');
    expect(new Date(MAX_DATE_MS).toISOString()).toBe('9999-12-31T23:59:59.999Z');
    for (const t of [MIN_DATE_MS, 0, MAX_DATE_MS])
      expect(dateProblem(new Date(t), '"created"')).toBeNull();
    expect(dateProblem(new Date(MIN_DATE_MS - 1), '"created"')).toMatch(
      /^"created" must be a date from year 0000 to 9999 \(UTC\), got -000001-12-31T23:59:59.999Z/,
    );
    expect(dateProblem(new Date(MAX_DATE_MS + 1), 'x')).toMatch(/got \+010000-01-01T/);
    expect(dateProblem(new Date(NaN), 'x')).toMatch(/got an invalid date/);
    expect(dateProblem('2025-01-01', 'x')).toMatch(/got an invalid date/);
  });

  it('chunks hold whole numbers, a finite similarity, a role and text', () => {
    const good = {
      turn_id: 0,
      sentence_id: 0,
      role: 'user',
      text: '',
      similarity: -0.5,
      tokenCount: 0,
    };
    expect(chunkProblems(good)).toEqual([]);
    expect(chunkProblems({ ...good, turn_id: Number.MAX_SAFE_INTEGER })).toEqual([]);
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ turn_id: -1 }, /^chunk "turn_id" must be a whole number from 0 to \d+, got -1$/],
      [{ sentence_id: 1.5 }, /^chunk "sentence_id" .* got 1\.5$/],
      [{ tokenCount: -5 }, /^chunk "tokenCount" .* got -5$/],
      [{ turn_id: 2 ** 53 }, /^chunk "turn_id" .* got 9007199254740992$/],
      [{ similarity: Infinity }, /^chunk "similarity" must be a finite number/],
      [{ role: 'robot' }, /^chunk "role" must be one of user, assistant, system, tool/],
      [{ text: 5 }, /^chunk "text" must be a string, got 5$/],
    ];
    for (const [change, pattern] of bad) {
      expect(chunkProblems({ ...good, ...change })).toEqual([expect.stringMatching(pattern)]);
    }
  });

  it('message parts must be storable: meta a JSON object, tool calls named records', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    for (const parts of [
      { meta: { f: () => 1 } },
      { meta: { s: Symbol('s') } },
      { meta: cycle },
      { meta: [1] },
      { meta: 'text' },
      { toolCalls: 'x' },
      { toolCalls: [null] },
      { toolCalls: [{ id: 1, name: 'n' }] },
      { toolCalls: [{ id: 'c', name: 'n', arguments: () => 1 }] },
      { toolCallId: 5 },
    ]) {
      const r = validateMessageParts(parts);
      expect(isToolError(r) && r.code, JSON.stringify(Object.keys(parts))).toBe('INVALID_ARGUMENT');
    }
    const meta = { aborted: true };
    const toolCalls = [{ id: 'c', name: 'n', arguments: { a: [1] }, result: new Date(0) }];
    const r = validateMessageParts({ meta, toolCalls, toolCallId: 'c' });
    expect(r).toEqual({ meta, toolCalls, toolCallId: 'c' });
    expect(!isToolError(r) && r.meta).not.toBe(meta);
    expect(!isToolError(r) && r.toolCalls).not.toBe(toolCalls);
    expect(validateMessageParts({})).toEqual({});
  });
});
