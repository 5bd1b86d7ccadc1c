// How the "Recalled:" note names the past messages it links to (src/chat/recall.ts): each link
// says which message it opens, and a chat deleted since is named without its title.
import { describe, expect, it } from 'vitest';
import { turnLabels, type StoredRecalledTurn } from '../../src/chat/recall';

const turn = (over: Partial<StoredRecalledTurn>): StoredRecalledTurn => ({
  conversationId: 1,
  turnId: 1,
  chat: 'Plans',
  time: '2026-05-03T11:15:00Z',
  ...over,
});

describe('the names of recalled messages', () => {
  it('a chat and its day; two of one chat on one day with their time; alike to the minute, numbered', () => {
    const local = (iso: string) =>
      new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit' }).format(
        new Date(iso),
      );
    const labels = turnLabels([
      turn({ turnId: 1 }),
      turn({ turnId: 2, time: '2026-05-03T12:40:00Z' }),
      turn({ turnId: 3, chat: 'Trip', time: '2026-05-04T12:00:00Z' }),
      turn({ turnId: 4, chat: 'Trip', time: '2026-05-04T12:00:30Z' }),
      turn({ turnId: 5, chat: '', time: 'not a date' }),
    ]);
    expect(labels[0]).toMatch(/^the chat “Plans” \(3 May 2026, /);
    expect(labels[0]).toContain(local('2026-05-03T11:15:00Z'));
    expect(labels[1]).toContain(local('2026-05-03T12:40:00Z'));
    expect(labels[2]).toMatch(/^the chat “Trip” \(4 May 2026, \d\d:\d\d\) #1$/);
    expect(labels[3]).toMatch(/^the chat “Trip” \(4 May 2026, \d\d:\d\d\) #2$/);
    expect(labels[4]).toBe('a past chat');
    expect(new Set(labels).size).toBe(labels.length);
    // Alone, a message is named by its chat and day only.
    expect(turnLabels([turn({})])).toEqual(['the chat “Plans” (3 May 2026)']);
  });

  it('says the words recalled, then the chat (its title cut short) and the day', () => {
    expect(
      turnLabels([
        turn({
          said: 'Shall we go to the cinema on Friday?',
          chat: 'My sister Ana is moving to Lisbon in May and more',
        }),
        turn({ turnId: 2, said: 'Rain all week.', chat: '' }),
      ]),
    ).toEqual([
      '“Shall we go to the cinema on Friday?” (the chat “My sister Ana is moving to Lisbon in…”, 3 May 2026)',
      '“Rain all week.” (a past chat, 3 May 2026)',
    ]);
    // The chat named from the very message recalled: not said twice.
    expect(
      turnLabels([
        turn({
          said: 'My sister Ana is moving to Lisbon in May.',
          chat: 'My sister Ana is moving to Lisbon',
        }),
      ]),
    ).toEqual(['“My sister Ana is moving to Lisbon in May.” (first in its chat, 3 May 2026)']);
    // The same words twice: told apart by time, then number, as without words.
    const twice = turnLabels([
      turn({ said: 'Hi' }),
      turn({ turnId: 2, said: 'Hi', time: '2026-05-03T11:15:20Z' }),
    ]);
    expect(twice[0]).toMatch(/^“Hi” \(the chat “Plans”, 3 May 2026, \d\d:\d\d\) #1$/);
    expect(twice[1]).toMatch(/#2$/);
    // Deleted since: neither its words nor its title.
    expect(turnLabels([turn({ said: 'Gate code 1234', gone: true })])).toEqual([
      'a deleted chat (3 May 2026)',
    ]);
  });

  it('a chat deleted since is named so, without its title (its first words, often)', () => {
    expect(turnLabels([turn({ chat: 'My sister Ana is moving', gone: true })])).toEqual([
      'a deleted chat (3 May 2026)',
    ]);
  });
});
