// Reply groups, alternatives and titles (src/memory/replies.ts, docs/chat.md), and what deleting a
// message takes along (src/memory/tools/conversations.ts).
import { describe, expect, it } from 'vitest';
import {
  TITLE_MAX,
  replyGroups,
  titleFromMessage,
  visibleMessages,
} from '../../src/memory/replies';
import { messageDeletion } from '../../src/memory/tools/conversations';
import type { Message, Role } from '../../src/memory/types';

let next = 1;
const msg = (role: Role, text: string, alt?: number): Message => ({
  id: next++,
  conversationId: 1,
  role,
  text,
  time: new Date(0),
  ...(alt !== undefined ? { meta: { alt } } : {}),
});
const texts = (ms: Message[]) => ms.map((m) => m.text);

describe('reply groups', () => {
  it('shows the alternative the user message names, in id order whatever the input order', () => {
    const q = msg('user', 'Q');
    q.meta = { alt: 1 };
    const all = [msg('assistant', 'A0'), msg('assistant', 'A1', 1), msg('assistant', 'A2', 2)];
    const conv = [msg('system', 'hello'), q, ...all].reverse();
    // The system message was made first: it sits before the user's.
    conv[conv.length - 1].id = 0;
    expect(texts(visibleMessages(conv))).toEqual(['hello', 'Q', 'A1']);
    const [, group] = replyGroups(conv);
    expect(group.alternatives).toEqual([0, 1, 2]);
    expect(group.shown).toBe(1);
  });

  it('an alternative named but with no messages falls back to the newest that has some', () => {
    const q = msg('user', 'Q');
    q.meta = { alt: 5 };
    const conv = [q, msg('assistant', 'A0'), msg('assistant', 'A1', 1)];
    expect(texts(visibleMessages(conv))).toEqual(['Q', 'A1']);
  });

  it('a regeneration in progress shows only its own reply, and only in the last group', () => {
    const conv = [
      msg('user', 'Q1'),
      msg('assistant', 'old', 0),
      msg('assistant', 'other', 1),
      msg('user', 'Q2'),
      msg('assistant', 'B0'),
    ];
    expect(texts(visibleMessages(conv, 1))).toEqual(['Q1', 'old', 'Q2']);
  });

  it('tool results follow their alternative', () => {
    const conv = [
      msg('user', 'Q'),
      msg('assistant', 'calls', 0),
      msg('tool', '{}', 0),
      msg('assistant', 'answer', 0),
      msg('assistant', 'second', 1),
    ];
    conv[0].meta = { alt: 0 };
    expect(texts(visibleMessages(conv))).toEqual(['Q', 'calls', '{}', 'answer']);
  });
});

describe('titles from the first message', () => {
  it('the first line with words, marks dropped, spaces collapsed', () => {
    expect(titleFromMessage('\n\n# **Plan**   the  `trip`\nmore')).toBe('Plan the trip');
  });

  it('a long line is cut at a word, with an ellipsis', () => {
    const t = titleFromMessage(
      'Please help me plan a week of vegetarian dinners for two people on a budget',
    );
    expect(t).toBe('Please help me plan a week of vegetarian dinners…');
    expect(t.length).toBeLessThanOrEqual(TITLE_MAX + 1);
  });

  it('one very long word is cut where it must be', () => {
    expect(titleFromMessage('x'.repeat(200))).toBe(`${'x'.repeat(TITLE_MAX)}…`);
  });

  it('no words, no title', () => {
    expect(titleFromMessage(' \n ``` \n *** ')).toBe('');
  });
});

describe('what deleting a message takes along (messageDeletion)', () => {
  it('an assistant message takes the results of its own tool calls, nothing else', () => {
    const q = msg('user', 'Q');
    const a = msg('assistant', 'calling');
    a.toolCalls = [{ id: 'c1', name: 'saveMemory', arguments: '{}' }];
    const r1 = { ...msg('tool', 'done'), toolCallId: 'c1' };
    const r2 = { ...msg('tool', 'other'), toolCallId: 'c9' };
    const after = msg('assistant', 'answer');
    const { gone, retagged } = messageDeletion([q, a, r1, r2, after], a);
    expect(gone).toEqual([a.id, r1.id]);
    expect(retagged).toEqual([]);
  });

  it('a user message takes the alternatives not shown; the shown one joins the reply before', () => {
    const q1 = msg('user', 'Q1');
    q1.meta = { alt: 1 };
    const a1 = [msg('assistant', 'A1 v0'), msg('assistant', 'A1 v1', 1)];
    const q2 = msg('user', 'Q2');
    q2.meta = { alt: 2 };
    const a2 = [msg('assistant', 'A2 v0'), msg('assistant', 'A2 v2', 2)];
    const { gone, retagged } = messageDeletion([q1, ...a1, q2, ...a2], q2);
    expect(gone).toEqual([q2.id, a2[0].id]);
    // A2 v2 now follows Q1's reply, whose shown alternative is 1.
    expect(retagged).toEqual([{ id: a2[1].id, meta: { alt: 1 } }]);
  });

  it('at the start of a conversation the shown reply becomes alternative 0 (no alt in meta)', () => {
    const q = msg('user', 'Q');
    q.meta = { alt: 1 };
    const a = [msg('assistant', 'v0'), { ...msg('assistant', 'v1', 1), meta: { alt: 1, x: 2 } }];
    const { gone, retagged } = messageDeletion([q, ...a], q);
    expect(gone).toEqual([q.id, a[0].id]);
    expect(retagged).toEqual([{ id: a[1].id, meta: { x: 2 } }]);
  });

  it('a plain reply message goes alone', () => {
    const q = msg('user', 'Q');
    const a = msg('assistant', 'A');
    expect(messageDeletion([q, a], a)).toEqual({ gone: [a.id], retagged: [] });
  });
});
