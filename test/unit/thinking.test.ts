// A reasoning model's thinking in its reply (src/llm/thinking.ts): what the reply said is the
// answer after the thinking that starts it; tags an answer only mentions stay its words.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  blankThinking,
  splitThinking,
  thinkingReader,
  withoutThinking,
} from '../../src/llm/thinking';

/** A reply read piece by piece, as the chat shows it while it streams. */
function readStreamed(pieces: readonly string[]): { thought: string; answer: string } {
  const reader = thinkingReader();
  let thought = '';
  let answer = '';
  for (const p of [...pieces.map((piece) => reader.read(piece)), reader.end()]) {
    if (p.wasThinking) {
      thought = answer;
      answer = '';
    }
    thought += p.thought;
    answer += p.answer;
  }
  return { thought: thought.trim(), answer: answer.trim() };
}

/** Cuts `text` at the given places. */
function cut(text: string, at: readonly number[]): string[] {
  const places = [...new Set(at.map((i) => i % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const i of places) {
    pieces.push(text.slice(from, i));
    from = i;
  }
  pieces.push(text.slice(from));
  return pieces;
}

describe('thinking', () => {
  it('the thinking that starts a reply is left out of what it said', () => {
    expect(withoutThinking('<think>\nMaybe Lisbon?\n</think>\n\nAna moved to Porto.')).toBe(
      'Ana moved to Porto.',
    );
    expect(withoutThinking('  <think>Still thinking when the tokens ran out')).toBe('');
    // Opened by the template in the prompt: the reply closes it without opening it.
    expect(withoutThinking('Maybe Lisbon?\n</think>\n\nAna moved to Porto.')).toBe(
      'Ana moved to Porto.',
    );
  });

  it('tags an answer mentions are its words, not thinking', () => {
    const answer =
      'Use `<think>` tags. Then the model keeps its reasoning apart: `</think>` ends it.';
    expect(withoutThinking(answer)).toBe(answer);
    expect(blankThinking(answer)).toBe(answer);
    const after = '<think>x</think>\nThe tag `<think>` opens it.';
    expect(withoutThinking(after)).toBe('The tag `<think>` opens it.');
    expect(blankThinking(after)).toHaveLength(after.length);
  });

  it('splits a reply that starts with thinking into the thought and the answer, for the chat', () => {
    expect(splitThinking('<think>\nMaybe Lisbon?\n</think>\n\nAna moved to **Porto**.')).toEqual({
      thought: 'Maybe Lisbon?',
      answer: 'Ana moved to **Porto**.',
    });
    expect(splitThinking('<think>Only thinking')).toEqual({ thought: 'Only thinking', answer: '' });
    expect(splitThinking('Use `<think>` tags.')).toBeUndefined();
    expect(splitThinking('No thinking here.')).toBeUndefined();
  });

  it('reads a streamed reply as the whole is read, however it is cut into pieces', () => {
    const replies = [
      '<think>\nMaybe Lisbon?\n</think>\n\nAna moved to **Porto**.',
      '  <think>Still thinking when the tokens ran out',
      'Maybe Lisbon?\n</think>\n\nAna moved to Porto.',
      'Use `<think>` tags. Then `</think>` ends it.',
      '<think>x</think>\nThe tag `<think>` opens it, `</think>` closes it.',
      'No thinking here, only a < and a </ and a <thin.',
      '<think></think>Empty thought.',
    ];
    for (const reply of replies) {
      const whole = splitThinking(reply) ?? { thought: '', answer: reply.trim() };
      expect(readStreamed([reply])).toEqual(whole);
      expect(readStreamed([...reply])).toEqual(whole);
    }
    const word = fc.constantFrom(
      '<think>',
      '</think>',
      '<',
      '</',
      '<thi',
      ' ',
      '\n',
      'a',
      'Lisbon',
    );
    fc.assert(
      fc.property(
        fc.array(word, { maxLength: 12 }).map((w) => w.join('')),
        fc.array(fc.nat(200), { maxLength: 8 }),
        (reply, at) => {
          const whole = splitThinking(reply) ?? { thought: '', answer: reply.trim() };
          expect(readStreamed(cut(reply, at))).toEqual(whole);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('reads a reply that starts with a long run of white space, piece by piece, in one pass', () => {
    // A model looping on line breaks: each piece is looked at once, not the run again.
    const pieces = [...Array.from({ length: 100_000 }, () => '\n\n'), '<think>x</think>Hello'];
    expect(readStreamed(pieces)).toEqual({ thought: 'x', answer: 'Hello' });
  });
});
