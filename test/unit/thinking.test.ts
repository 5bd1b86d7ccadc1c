// A reasoning model's thinking in its reply (src/llm/thinking.ts): what the reply said is the
// answer after the thinking that starts it; tags an answer only mentions stay its words.
import { describe, expect, it } from 'vitest';
import { blankThinking, splitThinking, withoutThinking } from '../../src/llm/thinking';

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
});
