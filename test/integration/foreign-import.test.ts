// Importing other tools' files through the engine (issue 24, docs/import-export.md): a
// SillyTavern chat becomes a chat whose messages keep their dates and swipes and are found by
// search and recall; the same file again adds nothing; lorebooks and character cards become
// entries whose names never overwrite; bad files change nothing.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { replyGroups, visibleMessages } from '../../src/memory/replies';
import type { MemoryApi } from '../../src/memory/types';
import { cardText, pngWithText } from '../unit/import-png';
import { closeAll, contentSnapshot, expectError, ok, openTestMemory, tableRows } from './helpers';

afterEach(closeAll);

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/imports/${name}`, import.meta.url), 'utf8');

const FACT = 'The lighthouse keeper is Bartholomew Quill; he has kept the lamp for forty winters.';

async function importChat(mem: MemoryApi) {
  return ok(await mem.importFile({ name: 'Seraphina.jsonl', data: fixture('seraphina.jsonl') }));
}

describe('a SillyTavern chat', () => {
  it('becomes a chat with its messages, speakers, dates and the chosen swipe shown', async () => {
    const { mem } = openTestMemory();
    const r = await importChat(mem);
    expect(r.kind).toBe('sillytavern-chat');
    expect(r.chats).toEqual([
      { id: expect.any(Number), title: 'Seraphina · 2024-07-12', messages: 7 },
    ]);
    const [conv] = await mem.listConversations();
    expect(conv.title).toBe('Seraphina · 2024-07-12');
    expect(conv.created).toEqual(new Date(2024, 6, 12, 1, 31, 37));

    const messages = await mem.getMessages(conv.id!);
    const shown = visibleMessages(messages);
    expect(shown.map((m) => [m.role, m.meta?.speaker])).toEqual([
      ['assistant', 'Seraphina'],
      ['user', 'Mira'],
      ['assistant', 'Seraphina'],
      ['system', 'System'],
      ['user', 'Mira'],
      ['assistant', 'Seraphina'],
      ['user', 'Zoë 🌙'],
    ]);
    expect(shown[2].text).toBe(FACT);
    expect(shown[2].time).toEqual(new Date(2024, 6, 12, 13, 34, 5, 120));
    expect(shown[3].time).toEqual(new Date(1720791300000));

    // The other two swipes are alternatives of that reply, and can be shown instead.
    const group = replyGroups(messages).find((g) => g.user?.id === shown[1].id)!;
    expect(group.alternatives).toEqual([0, 1, 2]);
    ok(await mem.selectAlternative(shown[1].id, 2));
    const again = visibleMessages(await mem.getMessages(conv.id!));
    expect(again[2].text).toBe('A ghost, some say.');
  });

  it('is found by search and recall, each message with its own date', async () => {
    const { mem } = openTestMemory();
    await importChat(mem);
    const found = ok(await mem.searchConversations('who keeps the lighthouse lamp', 5));
    const hit = found.results.find((h) => h.text.includes('Bartholomew Quill'));
    // Named as the chat names its speakers (a group chat's characters apart).
    expect(hit).toMatchObject({ chat: 'Seraphina · 2024-07-12', speaker: 'Seraphina' });
    expect(new Date(hit!.date)).toEqual(new Date(2024, 6, 12, 13, 34, 5, 120));
    // Not a swipe that was not chosen.
    expect(found.results.some((h) => h.text.includes('A ghost'))).toBe(false);
    const recalled = await mem.recallMemory('Bartholomew Quill lighthouse keeper', 3);
    expect(recalled).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'turn', text: FACT })]),
    );
    // The system note is indexed too.
    const chunks = await mem.searchChunks(null, 'map under the loose floorboard', 3);
    expect(chunks[0].chunk.text).toContain('floorboard');
    expect(chunks[0].chunk.time).toEqual(new Date(1720791300000));
  });

  it('adds nothing the second time, and says so', async () => {
    const { mem, name } = openTestMemory();
    await importChat(mem);
    const before = await contentSnapshot(name);
    const again = await importChat(mem);
    expect(again.duplicate).toBe(true);
    expect(again.chats).toEqual([]);
    expect(await contentSnapshot(name)).toEqual(before);
  });

  it('skips lines that are not messages, saying which and why', async () => {
    const { mem } = openTestMemory();
    const r = ok(await mem.importFile({ name: 'b.jsonl', data: fixture('broken-lines.jsonl') }));
    expect(r.chats[0].messages).toBe(2);
    expect(r.skipped.map((s) => s.where)).toEqual(['line 3', 'line 4']);
  });

  it('refuses 100 MB of messages in a sentence before reading it, and writes nothing', async () => {
    const { mem, name } = openTestMemory();
    await importChat(mem);
    const before = await contentSnapshot(name);
    const header = JSON.stringify({ user_name: 'You', character_name: 'Ana', chat_metadata: {} });
    const line = JSON.stringify({
      name: 'You',
      is_user: true,
      send_date: '2024-05-01T10:00:00.000Z',
      mes: 'x'.repeat(1000),
    });
    const huge = new TextEncoder().encode(
      `${header}\n${`${line}\n`.repeat(Math.ceil((100 * 1024 * 1024) / line.length))}`,
    );
    const r = await mem.importFile({ name: 'long-chat.jsonl', data: huge });
    expectError(r, 'INVALID_CONTENT');
    expect((r as { message: string }).message).toMatch(
      /^Nothing was imported; nothing changed\. long-chat\.jsonl is 100 MB: a file from another tool is imported up to 32 MB at a time\./,
    );
    expect(await contentSnapshot(name)).toEqual(before);
  });

  it('refuses a bad file in a sentence and writes nothing', async () => {
    const { mem, name } = openTestMemory();
    await importChat(mem);
    const before = await contentSnapshot(name);
    const bad = await mem.importFile({ name: 'notes.jsonl', data: 'just some notes\nmore' });
    expectError(bad, 'INVALID_CONTENT');
    expect((bad as { message: string }).message).toBe(
      'Nothing was imported; nothing changed. notes.jsonl is not a SillyTavern chat (its first line is not JSON). A chat file has one JSON object per line: a header, then the messages.',
    );
    expectError(await mem.importFile({ name: 'e.jsonl', data: '' }), 'INVALID_CONTENT');
    expectError(await mem.importFile({ name: 'x.png', data: pngWithText() }), 'INVALID_CONTENT');
    expect(await contentSnapshot(name)).toEqual(before);
  });
});

describe('lorebooks and character cards', () => {
  it('a World Info file becomes entries with their keys; again, nothing is added', async () => {
    const { mem } = openTestMemory();
    const r = ok(
      await mem.importFile({ name: 'Eldoria.json', data: fixture('eldoria-world.json') }),
    );
    expect(r.kind).toBe('lorebook');
    expect(r.entries).toEqual([
      'Lorebook/Eldoria/Eldoria',
      'Lorebook/Eldoria/Guild of Lamps',
      'Lorebook/Eldoria/History-..-The old war',
      'Lorebook/Eldoria/Eldoria 2',
    ]);
    expect(ok(await mem.queryMemory('Lorebook/Eldoria/Guild of Lamps')).content).toEqual({
      content: 'The Guild of Lamps lights every street lamp at dusk.',
      keys: ['Guild of Lamps'],
      secondaryKeys: ['lamplighter'],
      constant: true,
    });
    const heading = ok(await mem.queryMemoryHeading('Lorebook', 'bridges over the river'));
    expect(JSON.stringify(heading.children)).toContain('seven bridges');
    const again = ok(
      await mem.importFile({ name: 'Eldoria.json', data: fixture('eldoria-world.json') }),
    );
    expect(again.entries).toEqual([]);
    expect(again.unchanged).toBe(4);
  });

  it('entries whose long names differ only past 128 characters are all kept, numbered', async () => {
    const { mem } = openTestMemory();
    const long = 'The history of the seven bridges over the river Auln '.repeat(4);
    const entry = (uid: number, comment: string, content: string) => ({
      uid,
      key: ['bridge'],
      keysecondary: [],
      comment,
      content,
    });
    const book = {
      entries: {
        0: entry(0, `${long} part one`, 'The first bridge was built of oak.'),
        1: entry(1, `${long} part two`, 'The second bridge was built of stone.'),
      },
    };
    const r = ok(await mem.importFile({ name: 'Bridges.json', data: JSON.stringify(book) }));
    expect(r.entries).toHaveLength(2);
    expect(r.unchanged).toBe(0);
    expect(r.skipped).toEqual([]);
    const contents = await Promise.all(
      r.entries.map(
        async (p) => (ok(await mem.queryMemory(p)).content as { content: string }).content,
      ),
    );
    expect(contents).toEqual([
      'The first bridge was built of oak.',
      'The second bridge was built of stone.',
    ]);
    expect(r.entries[1]).toMatch(/ 2$/);
  });

  it('never overwrites an entry of the same name', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('Lorebook/Eldoria/Eldoria', 'my own notes'));
    const r = ok(
      await mem.importFile({ name: 'Eldoria.json', data: fixture('eldoria-world.json') }),
    );
    expect(r.entries[0]).toBe('Lorebook/Eldoria/Eldoria 2');
    expect(ok(await mem.queryMemory('Lorebook/Eldoria/Eldoria')).content).toBe('my own notes');
  });

  it('a card in a PNG becomes Characters/<name> entries and its lorebook, in one write', async () => {
    const { mem, name } = openTestMemory();
    const card = JSON.parse(fixture('card-v2.json')) as unknown;
    const r = ok(
      await mem.importFile({ name: 'Seraphina.png', data: pngWithText({ chara: cardText(card) }) }),
    );
    expect(r.kind).toBe('character');
    expect(r.entries).toContain('Characters/Seraphina/First message');
    expect(r.entries).toContain('Lorebook/Glade lore/Moonwell');
    expect(ok(await mem.queryMemory('Characters/Seraphina/Scenario')).content).toBe(
      "Mira wakes in Seraphina's glade after a storm.",
    );
    const rows = await tableRows<{ version: number }>(name, 'structured_memory');
    expect(rows).toHaveLength(8);
  });
});

describe('recordTurn with a time', () => {
  it('dates the message and its sentences when the turn was said', async () => {
    const { mem, name } = openTestMemory();
    const conv = ok(await mem.createConversation('Old'));
    const said = new Date('2023-03-04T05:06:07Z');
    const r = ok(
      await mem.recordTurn({
        conversationId: conv.id,
        role: 'user',
        text: 'Hello there. How are you?',
        time: said,
      }),
    );
    const [message] = await mem.getMessages(conv.id);
    expect(message.time).toEqual(said);
    const chunks = await tableRows<{ turnId: number; time: Date }>(name, 'chunks');
    expect(chunks.filter((c) => c.turnId === r.turnId).map((c) => c.time)).toEqual([said, said]);
    expectError(
      await mem.recordTurn({ conversationId: conv.id, role: 'user', text: 'x', time: NaN }),
      'INVALID_ARGUMENT',
    );
  });
});

describe('memory as a SillyTavern lorebook', () => {
  it('has every field SillyTavern reads, and imports back to the same entries and contents', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('User/Preferences/Coffee', 'Oat milk flat white, no sugar.'));
    ok(await mem.saveMemory('Groceries', ['eggs', 'flour']));
    ok(
      await mem.saveMemory('Projects/Garden', {
        beds: 3,
        plants: ['tomato', 'basil'],
        note: 'Water at dawn.',
      }),
    );
    ok(await mem.importFile({ name: 'Eldoria.json', data: fixture('eldoria-world.json') }));
    const text = await mem.exportLorebook();
    if (typeof text !== 'string') throw new Error(text.message);
    const world = JSON.parse(text) as { entries: Record<string, Record<string, unknown>> };
    const entries = Object.values(world.entries);
    expect(entries).toHaveLength(7);
    const types = {
      uid: 'number',
      key: 'array',
      keysecondary: 'array',
      comment: 'string',
      content: 'string',
      constant: 'boolean',
      vectorized: 'boolean',
      selective: 'boolean',
      selectiveLogic: 'number',
      addMemo: 'boolean',
      order: 'number',
      position: 'number',
      disable: 'boolean',
      excludeRecursion: 'boolean',
      preventRecursion: 'boolean',
      delayUntilRecursion: 'number',
      probability: 'number',
      useProbability: 'boolean',
      depth: 'number',
      group: 'string',
      groupOverride: 'boolean',
      groupWeight: 'number',
      scanDepth: 'null',
      caseSensitive: 'null',
      matchWholeWords: 'null',
      useGroupScoring: 'null',
      automationId: 'string',
      role: 'number',
      sticky: 'null',
      cooldown: 'null',
      delay: 'null',
      displayIndex: 'number',
    };
    const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
    for (const e of entries) {
      for (const [field, type] of Object.entries(types)) expect(typeOf(e[field]), field).toBe(type);
      expect(world.entries[String(e.uid)]).toBe(e);
    }
    const coffee = entries.find((e) => e.comment === 'User/Preferences/Coffee')!;
    expect(coffee.content).toBe('Oat milk flat white, no sugar.');
    expect(coffee.key).toEqual(expect.arrayContaining(['User', 'Preferences', 'Coffee']));
    const garden = entries.find((e) => e.comment === 'Projects/Garden')!;
    expect(garden.content).toBe('beds: 3\nplants:\n  - tomato\n  - basil\nnote: Water at dawn.');
    const guild = entries.find((e) => e.comment === 'Lorebook/Eldoria/Guild of Lamps')!;
    expect(guild).toMatchObject({
      key: ['Guild of Lamps'],
      keysecondary: ['lamplighter'],
      constant: true,
    });
    const war = entries.find((e) => e.comment === 'Lorebook/Eldoria/History-..-The old war')!;
    expect(war.disable).toBe(true);

    // Into an empty memory: the same entries, the same contents.
    const before = await mem.memoryIndex();
    const contents = async (m: MemoryApi, paths: string[]) =>
      Promise.all(paths.map(async (p) => [p, ok(await m.queryMemory(p)).content]));
    const paths = before.map((e) => e.path).sort();
    const other = openTestMemory().mem;
    const back = ok(
      await other.importFile({ name: 'structured-memory-lorebook.json', data: text }),
    );
    expect([...back.entries].sort()).toEqual(paths);
    expect(await contents(other, paths)).toEqual(await contents(mem, paths));
    // Into the memory it came from: nothing new.
    const again = ok(await mem.importFile({ name: 'structured-memory-lorebook.json', data: text }));
    expect(again.entries).toEqual([]);
    expect(again.unchanged).toBe(7);
    // Changed in SillyTavern: a lore entry's keys, a plain entry disabled. Both come back so.
    const edited = JSON.parse(text) as typeof world;
    const guildAgain = Object.values(edited.entries).find(
      (e) => e.comment === 'Lorebook/Eldoria/Guild of Lamps',
    )!;
    guildAgain.key = ['Guild of Lamps', 'lamp guild'];
    const coffeeAgain = Object.values(edited.entries).find(
      (e) => e.comment === 'User/Preferences/Coffee',
    )!;
    coffeeAgain.disable = true;
    const changed = ok(await mem.importFile({ name: 'edited.json', data: JSON.stringify(edited) }));
    // As with a changed text: beside the entry, never over it (an import overwrites nothing).
    expect([...changed.entries].sort()).toEqual([
      'Lorebook/Eldoria/Guild of Lamps 2',
      'User/Preferences/Coffee 2',
    ]);
    expect(changed.unchanged).toBe(5);
    expect(ok(await mem.queryMemory('Lorebook/Eldoria/Guild of Lamps 2')).content).toMatchObject({
      keys: ['Guild of Lamps', 'lamp guild'],
    });
    expect(ok(await mem.queryMemory('User/Preferences/Coffee 2')).content).toMatchObject({
      content: 'Oat milk flat white, no sugar.',
      disabled: true,
    });
    // A subtree alone.
    const sub = await mem.exportLorebook('Projects');
    expect(
      Object.values((JSON.parse(sub as string) as typeof world).entries).map((e) => e.comment),
    ).toEqual(['Projects/Garden']);
  });
});

describe('a KoboldAI Lite save', () => {
  it('becomes a chat found by search, and entries for memory, author’s note and world info', async () => {
    const { mem } = openTestMemory();
    const r = ok(await mem.importFile({ name: 'The inn.json', data: fixture('kobold-chat.json') }));
    expect(r.kind).toBe('kobold');
    expect(r.chats).toEqual([
      {
        id: expect.any(Number),
        title: expect.stringMatching(/^KoboldAI · \d{4}-\d{2}-\d{2}$/),
        messages: 5,
      },
    ]);
    expect(r.entries).toHaveLength(4);
    expect(ok(await mem.queryMemory('KoboldAI Lite/The inn/Memory')).content).toBe(
      '[The user is a courier named Tamsin, carrying a sealed letter to the duke.]',
    );
    const found = ok(await mem.searchConversations('is the northern road flooded', 3));
    expect(found.results[0].text).toContain('flooded past the old mill');
    const again = ok(
      await mem.importFile({ name: 'The inn.json', data: fixture('kobold-chat.json') }),
    );
    expect(again.duplicate).toBe(true);
  });
});

describe('an imported chat in a backup', () => {
  it('keeps its fingerprint: after a restore, importing the file again still adds nothing', async () => {
    const { mem } = openTestMemory();
    await importChat(mem);
    const backup = await mem.exportJson();
    if (typeof backup !== 'string') throw new Error(backup.message);
    const other = openTestMemory().mem;
    ok(await other.importJson(backup, 'replace'));
    expect((await importChat(other)).duplicate).toBe(true);
    expect(await other.listConversations()).toHaveLength(1);
  });
});

describe('odd dates and names in a chat file', () => {
  it('a date in microseconds and a huge speaker name still leave a backup that restores', async () => {
    const { mem } = openTestMemory();
    const header = JSON.stringify({ user_name: 'You', character_name: 'Ana', chat_metadata: {} });
    const lines = [
      { name: 'You', is_user: true, send_date: '2024-05-01T10:00:00.000Z', mes: 'Hello Ana.' },
      // Microseconds since 1970: year 56499 as milliseconds.
      { name: 'Ana', is_user: false, send_date: 1720791300000000, mes: 'Hello! How are you?' },
      { name: 'N'.repeat(40_000), is_user: false, send_date: 1720791300000, mes: 'Who am I?' },
    ].map((l) => JSON.stringify(l));
    const r = ok(await mem.importFile({ name: 'odd.jsonl', data: [header, ...lines].join('\n') }));
    const messages = await mem.getMessages(r.chats[0].id);
    expect(messages.map((m) => m.text)).toEqual(['Hello Ana.', 'Hello! How are you?', 'Who am I?']);
    // The odd date takes the one before it; the name is cut.
    expect(messages[1].time.toISOString()).toBe('2024-05-01T10:00:00.000Z');
    expect(String(messages[2].meta?.speaker).length).toBeLessThanOrEqual(200);
    const backup = await mem.exportJson();
    if (typeof backup !== 'string') throw new Error(backup.message);
    const other = openTestMemory().mem;
    ok(await other.importJson(backup, 'replace'));
    expect(await other.listConversations()).toHaveLength(1);
  });
});

describe('an entry too large to save', () => {
  it('is left out with its reason; the rest of the book is imported', async () => {
    const { mem } = openTestMemory();
    const book = {
      entries: {
        0: { uid: 0, key: ['small'], comment: 'Small', content: 'A small entry.' },
        1: { uid: 1, key: ['huge'], comment: 'Huge', content: 'word '.repeat(20_000) },
      },
    };
    const r = ok(await mem.importFile({ name: 'Big.json', data: JSON.stringify(book) }));
    expect(r.entries).toEqual(['Lorebook/Big/Small']);
    expect(r.skipped).toEqual([
      { where: 'Lorebook/Big/Huge', reason: expect.stringMatching(/^left out \(.*content/) },
    ]);
  });
});
