import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tokenFilter } from '../../src/chat/chat-session';
import { beforeToolCall } from '../../src/llm/token-filter';

const run = (mode: 'native' | 'prompted', tokens: string[]) => {
  let out = '';
  const f = tokenFilter(mode, (t) => (out += t));
  tokens.forEach(f);
  return out;
};

describe('tokenFilter', () => {
  it('passes everything through in native mode', () => {
    expect(run('native', ['a <tool', '_call>{}'])).toBe('a <tool_call>{}');
  });

  it('hides a prompted tool call even when its marker is split across tokens', () => {
    expect(
      run('prompted', ['Sure, saving', ' now. <to', 'ol_', 'call>{"name":"saveMemory"}']),
    ).toBe('Sure, saving now. ');
    expect(run('prompted', ['[TOOL', '_CALLS][{"name":"x"}]'])).toBe('');
  });

  it('releases held-back text that turns out not to be a marker', () => {
    expect(run('prompted', ['a < b', ' and <t', 'able>'])).toBe('a < b and <table>');
  });

  it('shows thinking whole, a call it mentions and all, and hides a call after it', () => {
    expect(
      run('prompted', [
        '<thi',
        'nk>I could use <tool',
        '_call> here.</thi',
        'nk>Sure.',
        '<tool_call>{"name":"listMemory"}',
      ]),
    ).toBe('<think>I could use <tool_call> here.</think>Sure.');
  });

  it('shows exactly the text before the first marker, however the stream is split', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.array(fc.nat(40)), (before, after, cuts) => {
        fc.pre(!before.includes('<tool_call>') && !before.includes('[TOOL_CALLS]'));
        const text = `${before}<tool_call>${after}`;
        const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const tokens: string[] = [];
        let last = 0;
        for (const p of [...points, text.length]) {
          tokens.push(text.slice(last, p));
          last = p;
        }
        const shown = run('prompted', tokens);
        // Everything before the first marker (which may start inside `before`'s tail) and nothing after.
        const first = Math.min(
          ...['<tool_call>', '[TOOL_CALLS]'].map((m) => text.indexOf(m)).filter((i) => i >= 0),
        );
        expect(shown).toBe(text.slice(0, first));
      }),
    );
  });
});

describe('beforeToolCall', () => {
  it("cuts a bare JSON call that begins a line, whole or half written, and Llama's <|python_tag|>", () => {
    for (const [text, kept] of [
      [
        'Let me save that.\n{"name": "saveMemory", "parameters": {"path": "Fam',
        'Let me save that.\n',
      ],
      ['{"name": "saveMem', ''],
      ['{"name"', ''],
      ['Saving:\n  {"name": "saveMemory", "argu', 'Saving:\n  '],
      ['[{"name": "saveMemory", "arguments": {"path": "A"}}, {"name": "li', ''],
      ['{"name": "listMemory", "parameters": {}}\n\nYou have three', ''],
      ['Looking.\n```json\n{"name": "queryMemory", "arguments": {"pa', 'Looking.\n'],
      ['Sure. <|python_tag|>{"name": "saveMemory", "parameters": {"pa', 'Sure. '],
    ]) {
      expect(beforeToolCall(text)).toBe(kept);
    }
  });

  it('keeps JSON in an answer (not a call, or not at the start of a line) and thinking', () => {
    for (const text of [
      'Your contact:\n{"name": "Anna Smith", "phone": "555',
      'Your contact:\n{"name": "Anna", "age": 31}\nand more',
      '{"name": "Anna", "age": 3',
      'A call looks like {"name": "saveMemory", "arguments": {"pa',
      '<think>\nI could use <tool_call>{"name": "listMemory"\n</think>\nYou have',
      '<think>\n{"name": "listMemory", "parameters": {',
      'Here:\n{"name": "config", "value": 3}\n{"name": "Tom", "age": 3',
    ]) {
      expect(beforeToolCall(text)).toBe(text);
    }
  });
});
