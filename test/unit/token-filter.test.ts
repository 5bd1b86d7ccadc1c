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

describe('tokenFilter and bare JSON calls (Llama 3 and other small models in prompted mode)', () => {
  const CALL = '{"name": "saveMemory", "parameters": {"path": "Family/Ana", "content": "Lisbon"}}';

  /** `text` cut at the given places. */
  const cut = (text: string, at: readonly number[]): string[] => {
    const places = [...new Set(at.map((i) => i % (text.length + 1)))].sort((a, b) => a - b);
    return [...places, text.length].map((p, i, all) => text.slice(i ? all[i - 1] : 0, p));
  };

  it('hides a call that begins a line, and all after it, however the stream is split', () => {
    for (const [text, shown] of [
      [CALL, ''],
      [`  ${CALL}\n\nSaved.`, '  '],
      [`Let me save that.\n${CALL}`, 'Let me save that.\n'],
      [`[${CALL}, {"name": "listMemory", "arguments": {}}]`, ''],
      [`<think>\nShould I save?\n</think>${CALL}`, '<think>\nShould I save?\n</think>'],
    ]) {
      expect(run('prompted', [text])).toBe(shown);
      expect(run('prompted', [...text])).toBe(shown);
    }
    fc.assert(
      fc.property(fc.array(fc.nat(300), { maxLength: 10 }), (at) => {
        const text = `Sure, noted.\n${CALL}\nDone.`;
        expect(run('prompted', cut(text, at))).toBe('Sure, noted.\n');
      }),
    );
  });

  it('shows JSON that is no call, and JSON that does not begin a line, whole', () => {
    for (const text of [
      'Your contact:\n{"name": "Anna Smith", "phone": "555"}\nAnything else?',
      '{"name": "Anna", "age": 31}',
      '```json\n{\n  "path": "Family/Ana"\n}\n```',
      '[a link](https://example.org) and [another]',
      'A call looks like {"name": "saveMemory", "arguments": {}} in the text.',
      '<think>\n{"name": "listMemory", "parameters": {}}\n</think>\nNothing to list.',
      // Begun as a call but undecided past the bound: shown, not held back without end.
      `{"name": "saveMemory", "arguments": {"content": "${'la '.repeat(3000)}`,
    ]) {
      expect(run('prompted', [text])).toBe(text);
      expect(run('prompted', [...text])).toBe(text);
    }
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
      [
        'Sure.\n{\n  "name": "saveMemory",\n  "arguments": {"path": "Family/Ana", "content": "Lis',
        'Sure.\n',
      ],
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
