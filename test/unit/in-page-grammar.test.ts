// The in-page model's tool grammar (src/llm/in-page/grammar.ts): integer ranges accept exactly
// their numbers, the tools' schemas become rules llama.cpp reads (the e2e tests run them in the
// engine), and a call made under the grammar is read back as a tool call.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  intRange,
  literal,
  parseGrammarCall,
  schemaGrammar,
  toolGrammar,
} from '../../src/llm/in-page/grammar';
import { MEMORY_TOOLS, EXTRA_TOOLS, toolSpecs } from '../../src/chat/tools';

/** The rule body of intRange as a JS regular expression (its syntax is a subset of both). */
const asRegExp = (gbnf: string) => new RegExp(`^(?:${gbnf.replace(/[" ]/g, '')})$`);

describe('intRange', () => {
  it('accepts exactly the whole numbers in the range, as JSON writes them', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -5000, max: 5000 }),
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: -6000, max: 6000 }),
        (lo, width, probe) => {
          const re = asRegExp(intRange(lo, lo + width));
          const inRange = probe >= lo && probe <= lo + width;
          expect(re.test(String(probe))).toBe(inRange);
          // Never a leading zero or a plus sign.
          expect(re.test(`0${Math.abs(probe)}`) && Math.abs(probe) !== 0).toBe(false);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('covers the ranges the tools use', () => {
    const re = asRegExp(intRange(0, 4000));
    for (const n of [0, 9, 10, 99, 100, 999, 1000, 3999, 4000])
      expect(re.test(String(n))).toBe(true);
    for (const n of ['4001', '-1', '01', '10000']) expect(re.test(n)).toBe(false);
  });
});

describe('schemaGrammar', () => {
  it('writes required properties first, optional ones after, each as its type', () => {
    const grammar = schemaGrammar({
      type: 'object',
      properties: {
        note: { type: 'string', maxLength: 8 },
        count: { type: 'integer', minimum: 1, maximum: 20 },
        mode: { enum: ['a', 'b'] },
      },
      required: ['count'],
    });
    expect(grammar.split('\n')[0]).toBe('root ::= value');
    expect(grammar).toContain(
      'value ::= "{" ws "\\"count\\":" ws value-count ("," ws "\\"note\\":" ws value-note)? ("," ws "\\"mode\\":" ws value-mode)? ws "}"',
    );
    expect(grammar).toContain('value-note ::= "\\"" jchar{0,8} "\\""');
    expect(grammar).toContain('value-mode ::= "\\"a\\"" | "\\"b\\""');
  });

  it('has one rule per name for every tool the chat offers', () => {
    const grammar = toolGrammar(toolSpecs([...MEMORY_TOOLS, ...EXTRA_TOOLS]));
    const names = grammar.split('\n').map((line) => line.split(' ::= ')[0]);
    expect(new Set(names).size).toBe(names.length);
    expect(names[0]).toBe('root');
    // Every rule used is defined.
    const defined = new Set(names);
    const used = grammar
      .split('\n')
      .flatMap((line) => line.split(' ::= ')[1]!.replace(/"(?:[^"\\]|\\.)*"|\[[^\]]*\]/g, ' '))
      .flatMap((body) => body.match(/[A-Za-z][A-Za-z0-9-]*/g) ?? []);
    expect(used.filter((name) => !defined.has(name))).toEqual([]);
  });
});

describe('literal', () => {
  it('escapes quotes, backslashes and newlines', () => {
    expect(literal('a"b\\c\nd')).toBe('"a\\"b\\\\c\\nd"');
  });
});

describe('parseGrammarCall', () => {
  const id = () => 'call_1';
  it('reads a call, and leaves text and a cut-off call alone', () => {
    expect(
      parseGrammarCall(
        '<tool_call>{"name":"saveMemory","arguments":{"path":"Tea","content":"green"}}</tool_call>',
        id,
      ),
    ).toEqual({
      id: 'call_1',
      type: 'function',
      function: { name: 'saveMemory', arguments: '{"path":"Tea","content":"green"}' },
    });
    expect(parseGrammarCall('Hello there.', id)).toBeNull();
    expect(parseGrammarCall('<tool_call>{"name":"saveMemory","argu', id)).toBeNull();
  });
});
