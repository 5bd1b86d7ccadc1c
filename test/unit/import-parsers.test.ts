// The importers of other tools' files (src/memory/imports), pure: SillyTavern chats with their
// dates and swipes, World Info, character cards as JSON and in PNGs, and the refusals of bad
// files, on hand-written fixtures (test/fixtures/imports).
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseImportFile } from '../../src/memory/imports/detect';
import { segmentOf } from '../../src/memory/imports/names';
import { parseSillyTavernDate } from '../../src/memory/imports/sillytavern-chat';
import type { ParsedFile } from '../../src/memory/imports/types';
import { chatRows, placeEntries } from '../../src/memory/tools/foreign';
import { parsePath } from '../../src/memory/paths';
import { visibleMessages } from '../../src/memory/replies';
import type { Message } from '../../src/memory/types';
import { cardText, pngWithText } from './import-png';

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/imports/${name}`, import.meta.url), 'utf8');
const NOW = new Date(2026, 0, 1, 12, 0, 0);

function ok(p: ParsedFile): Extract<ParsedFile, { ok: true }> {
  if (!p.ok) throw new Error(`refused: ${p.message}`);
  return p;
}

function refused(p: ParsedFile): string {
  if (p.ok) throw new Error('expected a refusal');
  return p.message;
}

describe('SillyTavern dates', () => {
  it('reads every form SillyTavern writes, the worded and @ forms as local time', () => {
    expect(parseSillyTavernDate('June 19, 2023 2:20pm')).toEqual(new Date(2023, 5, 19, 14, 20));
    expect(parseSillyTavernDate('June 19, 2023 12:05am')).toEqual(new Date(2023, 5, 19, 0, 5));
    expect(parseSillyTavernDate('June 19, 2023 12:05pm')).toEqual(new Date(2023, 5, 19, 12, 5));
    expect(parseSillyTavernDate('2024-7-12@01h31m37s')).toEqual(new Date(2024, 6, 12, 1, 31, 37));
    expect(parseSillyTavernDate('2024-6-5 @14h 56m 50s 682ms')).toEqual(
      new Date(2024, 5, 5, 14, 56, 50, 682),
    );
    expect(parseSillyTavernDate(1720791300000)).toEqual(new Date(1720791300000));
    expect(parseSillyTavernDate('1720791300000')).toEqual(new Date(1720791300000));
    expect(parseSillyTavernDate('2024-07-12T13:37:00.000Z')).toEqual(
      new Date('2024-07-12T13:37:00.000Z'),
    );
  });

  it('gives nothing for what is not a date', () => {
    for (const v of [
      '',
      'yesterday',
      'Smarch 3, 2024 1:00pm',
      '2024-13-40@99h00m00s',
      -5,
      null,
      {},
    ])
      expect(parseSillyTavernDate(v)).toBeUndefined();
  });
});

describe('SillyTavern chats', () => {
  const parsed = ok(
    parseImportFile('Seraphina - 2024-7-12@01h31m37s.jsonl', fixture('seraphina.jsonl'), NOW),
  );
  const chat = parsed.chats[0];

  it('is one chat titled from the character and the day it was made', () => {
    expect(parsed.kind).toBe('sillytavern-chat');
    expect(parsed.chats).toHaveLength(1);
    expect(chat.title).toBe('Seraphina · 2024-07-12');
    expect(chat.created).toEqual(new Date(2024, 6, 12, 1, 31, 37));
    expect(parsed.skipped).toEqual([]);
  });

  it('keeps every message with its speaker, role and own date', () => {
    expect(chat.messages.map((m) => [m.role, m.speaker])).toEqual([
      ['assistant', 'Seraphina'],
      ['user', 'Mira'],
      ['assistant', 'Seraphina'],
      ['system', 'System'],
      ['user', 'Mira'],
      ['assistant', 'Seraphina'],
      ['user', 'Zoë 🌙'],
    ]);
    expect(chat.messages.map((m) => m.time)).toEqual([
      new Date(2024, 6, 12, 1, 31),
      new Date(2024, 6, 12, 13, 33),
      new Date(2024, 6, 12, 13, 34, 5, 120),
      new Date(1720791300000),
      new Date(1720791360000),
      new Date('2024-07-12T13:37:00.000Z'),
      new Date(2024, 6, 12, 0, 5),
    ]);
  });

  it('keeps the text the model saw, and display_text where the message has none', () => {
    expect(chat.messages[4].text).toBe('/sys the tide turns');
    expect(chat.messages[5].text).toContain('<script>alert(1)</script>');
  });

  it('keeps swipes as alternatives with the chosen one shown, each with its date', () => {
    const reply = chat.messages[2];
    expect(reply.shown).toBe(1);
    expect(reply.alternatives?.map((a) => a.text)).toEqual([
      'Nobody keeps it any more.',
      'The lighthouse keeper is Bartholomew Quill; he has kept the lamp for forty winters.',
      'A ghost, some say.',
    ]);
    expect(reply.alternatives?.[2].time).toEqual(new Date(2024, 6, 12, 13, 34, 20, 900));
  });

  it('stores swipes as reply alternatives that show the chosen one', () => {
    const { rows, indexed, dropped } = chatRows(chat);
    const messages = rows.map((r, i) => ({ ...r, id: i + 1, conversationId: 1 }) as Message);
    const shown = visibleMessages(messages).map((m) => m.text);
    expect(shown).toContain(
      'The lighthouse keeper is Bartholomew Quill; he has kept the lamp for forty winters.',
    );
    expect(shown).not.toContain('A ghost, some say.');
    expect(shown).toHaveLength(chat.messages.length);
    // The greeting's swipes have no message of the user to hang on: the chosen one is kept.
    expect(dropped).toEqual([
      {
        where: 'message 1',
        reason: expect.stringContaining('only the chosen swipe was kept, 1 other was left out'),
      },
    ]);
    // Only shown texts are indexed.
    expect(indexed.map((i) => rows[i].text)).toEqual(shown);
  });

  it('recent SillyTavern: a header naming no one ("unused") takes the replies’ speakers; hidden and narrator messages are notes; a picture alone is a turn', () => {
    const line = (v: object) => JSON.stringify(v);
    const when = (m: number) => `2025-03-03T10:0${m}:00.000Z`;
    const text = [
      line({ chat_metadata: {}, user_name: 'unused', character_name: 'unused' }),
      line({
        name: 'Mira',
        is_user: true,
        is_system: false,
        send_date: when(0),
        mes: 'Who is here?',
      }),
      line({ name: 'Bram', is_user: false, send_date: when(1), mes: 'Bram, at your service.' }),
      line({ name: 'Cora', is_user: false, send_date: when(2), mes: 'And Cora.' }),
      line({
        name: 'System',
        is_user: false,
        is_system: false,
        send_date: when(3),
        mes: 'Night falls.',
        extra: { type: 'narrator' },
      }),
      line({
        name: 'Mira',
        is_user: true,
        is_system: true,
        send_date: when(4),
        mes: 'A hidden aside.',
      }),
      line({
        name: 'Mira',
        is_user: true,
        send_date: when(5),
        mes: '',
        extra: { image: 'user/images/owl.png', title: 'an owl' },
      }),
      line({
        name: 'Bram',
        is_user: false,
        send_date: when(6),
        mes: 'What a lovely picture.',
        swipes: ['What a lovely picture.', 'An owl!'],
        swipe_id: 0,
      }),
    ].join('\n');
    const p = ok(parseImportFile('group.jsonl', text, NOW));
    expect(p.chats[0].title).toBe('Bram, Cora · 2025-03-03');
    expect(p.chats[0].messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'Who is here?'],
      ['assistant', 'Bram, at your service.'],
      ['assistant', 'And Cora.'],
      ['system', 'Night falls.'],
      ['system', 'A hidden aside.'],
      ['user', '[image: an owl]'],
      ['assistant', 'What a lovely picture.'],
    ]);
    // The reply to the picture keeps its swipes.
    expect(p.chats[0].messages[6].alternatives?.map((a) => a.text)).toEqual([
      'What a lovely picture.',
      'An owl!',
    ]);
    expect(p.skipped).toEqual([]);
    const { dropped } = chatRows(p.chats[0]);
    expect(dropped).toEqual([]);
  });

  it('a group chat: a swiped reply with another character’s after it keeps its chosen swipe, so no reply hides another', () => {
    const line = (v: object) => JSON.stringify(v);
    const text = [
      line({ user_name: 'unused', character_name: 'unused', chat_metadata: {} }),
      line({ name: 'Mira', is_user: true, send_date: 1, mes: 'Who took the map?' }),
      line({
        name: 'Cora',
        is_user: false,
        send_date: 2,
        mes: 'Not me.',
        swipes: ['Not me.', 'Nobody.'],
        swipe_id: 0,
      }),
      line({ name: 'Bram', is_user: false, send_date: 3, mes: 'I saw a gull take it.' }),
    ].join('\n');
    const p = ok(parseImportFile('group.jsonl', text, NOW));
    const { rows, dropped } = chatRows(p.chats[0]);
    const messages = rows.map((r, i) => ({ ...r, id: i + 1, conversationId: 1 }) as Message);
    expect(visibleMessages(messages).map((m) => m.text)).toEqual([
      'Who took the map?',
      'Not me.',
      'I saw a gull take it.',
    ]);
    expect(rows.some((r) => r.text === 'Nobody.')).toBe(false);
    expect(dropped).toEqual([
      {
        where: 'message 2',
        reason: expect.stringMatching(/^only the chosen swipe was kept, 1 other was left out/),
      },
    ]);
  });

  it('skips broken lines with their reason, and reads CRLF and a byte order mark', () => {
    const p = ok(parseImportFile('broken.jsonl', fixture('broken-lines.jsonl'), NOW));
    expect(p.chats[0].title).toBe('Seraphina · 2024-07-12');
    expect(p.chats[0].messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(p.skipped).toEqual([
      { where: 'line 3', reason: 'left out (it is not JSON; the file may be cut short)' },
      { where: 'line 4', reason: 'left out (it is not a message: it has no "mes" text)' },
    ]);
  });

  it('refuses, in a sentence, what is not a chat', () => {
    expect(refused(parseImportFile('empty.jsonl', '', NOW))).toBe(
      'empty.jsonl is empty: there is nothing to import.',
    );
    expect(refused(parseImportFile('a.jsonl', '\uFEFF\r\n', NOW))).toContain('is empty');
    expect(refused(parseImportFile('notes.jsonl', 'hello\nworld', NOW))).toBe(
      'notes.jsonl is not a SillyTavern chat (its first line is not JSON). A chat file has one JSON object per line: a header, then the messages.',
    );
    expect(
      refused(parseImportFile('h.jsonl', '{"user_name":"A","character_name":"B"}\n', NOW)),
    ).toContain('without any message');
    expect(refused(parseImportFile('x.json', '{"a":1', NOW))).toContain(
      'is not JSON or JSON lines',
    );
    expect(refused(parseImportFile('x.json', '[1,2]', NOW))).toContain(
      'is JSON but not a file this app knows',
    );
  });
});

describe('World Info', () => {
  const parsed = ok(parseImportFile('Eldoria world.json', fixture('eldoria-world.json'), NOW));

  it('becomes entries under Lorebook/<book>/<comment, else first key>, keys kept', () => {
    expect(parsed.kind).toBe('lorebook');
    expect(parsed.entries).toEqual([
      {
        heading: 'Lorebook/Eldoria world',
        name: 'Eldoria',
        content: {
          content: 'Eldoria is the capital, built on seven bridges over the river Auln.',
          keys: ['Eldoria', 'capital'],
        },
      },
      {
        heading: 'Lorebook/Eldoria world',
        name: 'Guild of Lamps',
        content: {
          content: 'The Guild of Lamps lights every street lamp at dusk.',
          keys: ['Guild of Lamps'],
          secondaryKeys: ['lamplighter'],
          constant: true,
        },
      },
      {
        heading: 'Lorebook/Eldoria world',
        name: 'History-..-The old war',
        content: {
          content: 'The old war ended with the treaty of Auln.',
          keys: ['the old war'],
          disabled: true,
        },
      },
      {
        heading: 'Lorebook/Eldoria world',
        name: 'Eldoria',
        content: { content: "Eldoria's bridges are closed at night.", keys: ['Eldoria'] },
      },
    ]);
    expect(parsed.skipped).toEqual([{ where: 'entry 3', reason: 'left out (it has no content)' }]);
  });

  it('numbers names that collide, and keeps what is already there unwritten', () => {
    const planned = parsed.entries;
    const first = placeEntries(planned, new Map());
    expect(first.map((p) => p?.path)).toEqual([
      'Lorebook/Eldoria world/Eldoria',
      'Lorebook/Eldoria world/Guild of Lamps',
      'Lorebook/Eldoria world/History-..-The old war',
      'Lorebook/Eldoria world/Eldoria 2',
    ]);
    // Imported again: the same contents are there, nothing is written.
    const stored = new Map(first.map((p) => [p!.path, p!.content]));
    expect(placeEntries(planned, stored)).toEqual([null, null, null, null]);
    // Another entry there already: numbered past it, never overwritten.
    const other = new Map([['Lorebook/Eldoria world/Eldoria', 'mine' as const]]);
    expect(placeEntries(planned, other).map((p) => p?.path)[0]).toBe(
      'Lorebook/Eldoria world/Eldoria 2',
    );
  });
});

describe('character cards', () => {
  const v2 = JSON.parse(fixture('card-v2.json')) as { spec: string; data: Record<string, unknown> };

  function expectSeraphina(p: ParsedFile) {
    const parsed = ok(p);
    expect(parsed.kind).toBe('character');
    const paths = placeEntries(parsed.entries, new Map()).map((e) => e?.path);
    expect(paths).toEqual([
      'Characters/Seraphina/Description',
      'Characters/Seraphina/Personality',
      'Characters/Seraphina/Scenario',
      'Characters/Seraphina/First message',
      'Characters/Seraphina/Example messages',
      'Characters/Seraphina/Alternate greetings',
      'Lorebook/Glade lore/The glade',
      'Lorebook/Glade lore/Moonwell',
    ]);
    expect(parsed.entries[0].content).toBe('A guardian of the forest glade, gentle and watchful.');
    expect(parsed.entries[7].content).toEqual({
      content: 'The moonwell heals wounds at midnight.',
      keys: ['moonwell'],
      secondaryKeys: ['water'],
    });
  }

  it('reads a V2 card as JSON with its lorebook', () => {
    expectSeraphina(parseImportFile('seraphina.json', fixture('card-v2.json'), NOW));
  });

  it('reads a card in a PNG, from chara (V2) or ccv3 (V3, preferred)', () => {
    expectSeraphina(parseImportFile('s.png', pngWithText({ chara: cardText(v2) }), NOW));
    const v3 = {
      ...v2,
      spec: 'chara_card_v3',
      data: { ...v2.data, assets: [{ type: 'icon', uri: 'ccdefault:', name: 'main', ext: 'png' }] },
    };
    const both = pngWithText({
      chara: cardText({ ...v2, data: { ...v2.data, name: 'Old' } }),
      ccv3: cardText(v3),
    });
    expectSeraphina(parseImportFile('s.png', both, NOW));
  });

  it('reads an old card without a lorebook', () => {
    const parsed = ok(parseImportFile('bart.json', fixture('card-v1.json'), NOW));
    expect(placeEntries(parsed.entries, new Map()).map((e) => e?.path)).toEqual([
      'Characters/Bartholomew Quill/Description',
      'Characters/Bartholomew Quill/Personality',
      'Characters/Bartholomew Quill/Scenario',
      'Characters/Bartholomew Quill/First message',
    ]);
  });

  it('refuses an image without a card, a damaged card and a cut image', () => {
    expect(refused(parseImportFile('cat.png', pngWithText({ Comment: 'a cat' }), NOW))).toBe(
      'cat.png is an image without a character card in it: there is nothing to import.',
    );
    expect(refused(parseImportFile('c.png', pngWithText({ chara: 'not base64 json!' }), NOW))).toBe(
      'The character card in c.png is damaged: it cannot be read.',
    );
    const whole = pngWithText({ chara: cardText(v2) });
    expect(refused(parseImportFile('c.png', whole.subarray(0, whole.length - 20), NOW))).toBe(
      'c.png cannot be read: the image is cut short.',
    );
  });
});

describe('names as path segments', () => {
  it('makes any name a valid segment', () => {
    for (const name of ['a/b', '..', '.', ' \u0000x\u2028y ', 'é'.repeat(300), '😀'.repeat(100)]) {
      const seg = segmentOf(name, 'Entry');
      expect(parsePath(`Lorebook/${seg}`).ok).toBe(true);
    }
    expect(segmentOf('..', 'Entry')).toBe('Entry');
    expect(segmentOf('a/b', 'Entry')).toBe('a-b');
  });
});

describe('KoboldAI Lite saves', () => {
  it('a chat-mode save: its turns by speaker, memory, author’s note and world info', () => {
    const p = ok(parseImportFile('The inn.json', fixture('kobold-chat.json'), NOW));
    expect(p.kind).toBe('kobold');
    expect(p.chats).toHaveLength(1);
    expect(p.chats[0].title).toBe('KoboldAI · 2026-01-01');
    expect(p.chats[0].messages.map((m) => [m.role, m.speaker, m.text])).toEqual([
      [
        'assistant',
        'KoboldAI',
        'Hello! I am the innkeeper of the Gilded Goose. What brings you here?',
      ],
      ['user', 'Tamsin', 'I need a room for the night, and news of the northern road.'],
      [
        'assistant',
        'KoboldAI',
        'The northern road is flooded past the old mill; take the ridge path instead.',
      ],
      ['user', 'Tamsin', 'Thank you. <b>Is</b> the ridge path safe?'],
      ['assistant', 'KoboldAI', 'Safe enough by day.'],
    ]);
    expect(placeEntries(p.entries, new Map()).map((e) => e?.path)).toEqual([
      'KoboldAI Lite/The inn/Memory',
      "KoboldAI Lite/The inn/Author's note",
      'Lorebook/The inn/The inn',
      'Lorebook/The inn/duke',
    ]);
    expect(p.entries[2].content).toEqual({
      content: 'The Gilded Goose is an inn at the crossroads, famous for plum cake.',
      keys: ['Gilded Goose', 'inn'],
    });
    expect(p.skipped).toEqual([
      { where: 'world info entry 3', reason: 'left out (it has no content)' },
    ]);
  });

  it('a story-mode save: the prompt, then each continuation', () => {
    const p = ok(parseImportFile('cape.json', fixture('kobold-story.json'), NOW));
    expect(p.chats[0].messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'The lighthouse stood alone on the cape.'],
      ['assistant', 'Its keeper, old Bartholomew, climbed the stairs.'],
      ['assistant', 'The lamp flickered once, then held.'],
    ]);
    expect(p.entries).toEqual([]);
  });

  it('an instruct-mode save: turns at its tags', () => {
    const save = {
      gamestarted: true,
      prompt: '',
      actions: [
        '{{[INPUT]}}Name a colour.',
        '{{[OUTPUT]}}Teal.',
        '{{[INPUT]}}Another.{{[OUTPUT]}}Ochre.',
      ],
      savedsettings: { opmode: 4 },
    };
    const p = ok(parseImportFile('i.json', JSON.stringify(save), NOW));
    expect(p.chats[0].messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'Name a colour.'],
      ['assistant', 'Teal.'],
      ['user', 'Another.'],
      ['assistant', 'Ochre.'],
    ]);
  });

  it('an instruct-mode save: Lite’s own placeholders, whatever tags its preset names, and raw tags', () => {
    // ChatML preset: the story still holds Lite's placeholders, the _END ones too.
    const chatml = {
      gamestarted: true,
      prompt: '\n{{[SYSTEM]}}\nYou are a helpful sage.\n{{[SYSTEM_END]}}\n',
      actions: [
        '\n{{[INPUT]}}\nWhat is wisdom?\n{{[INPUT_END]}}\n',
        '\n{{[OUTPUT]}}\nKnowing what you do not know.\n{{[OUTPUT_END]}}\n',
      ],
      savedsettings: {
        opmode: 4,
        instruct_starttag: '<|im_end|>\\n<|im_start|>user\\n',
        instruct_endtag: '<|im_end|>\\n<|im_start|>assistant\\n',
        instruct_systag: '<|im_start|>system\\n',
      },
    };
    const turns = (save: object) =>
      ok(parseImportFile('s.json', JSON.stringify(save), NOW)).chats[0].messages.map((m) => [
        m.role,
        m.text,
      ]);
    const expected = [
      ['system', 'You are a helpful sage.'],
      ['user', 'What is wisdom?'],
      ['assistant', 'Knowing what you do not know.'],
    ];
    expect(turns(chatml)).toEqual(expected);
    // Written with raw tags (Lite's "raw instruct tags" setting): the preset's tags mark the turns.
    const raw = {
      ...chatml,
      prompt: '<|im_start|>system\nYou are a helpful sage.',
      actions: [
        '<|im_end|>\n<|im_start|>user\nWhat is wisdom?',
        '<|im_end|>\n<|im_start|>assistant\nKnowing what you do not know.',
      ],
    };
    expect(turns(raw)).toEqual(expected);
  });

  it('refuses an empty save', () => {
    expect(
      refused(parseImportFile('e.json', '{"gamestarted":false,"prompt":"","actions":[]}', NOW)),
    ).toBe(
      'The KoboldAI Lite save e.json has no story, memory or world info: there is nothing to import.',
    );
  });
});

describe('any input', () => {
  const line = fc.oneof(
    fc.json(),
    fc.string(),
    fc
      .record({
        name: fc.string(),
        is_user: fc.boolean(),
        is_system: fc.boolean(),
        send_date: fc.oneof(fc.string(), fc.integer(), fc.constant('July 12, 2024 1:31am')),
        mes: fc.string(),
        swipes: fc.array(fc.string(), { maxLength: 4 }),
        swipe_id: fc.integer({ min: -2, max: 6 }),
      })
      .map((r) => JSON.stringify(r)),
  );

  it('is read or refused with a sentence, never thrown; what is read has valid paths', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('a.jsonl', 'a.json', 'a.png', 'a'),
        fc.oneof(
          fc.array(line, { maxLength: 8 }).map((ls) => ls.join('\n')),
          fc.json(),
          fc
            .record({
              entries: fc.dictionary(
                fc.string(),
                fc.record({
                  comment: fc.string(),
                  content: fc.string(),
                  key: fc.array(fc.string()),
                }),
              ),
            })
            .map((v) => JSON.stringify(v)),
          fc.uint8Array({ maxLength: 64 }),
        ),
        (name, data) => {
          const p = parseImportFile(name, data, NOW);
          if (!p.ok) {
            expect(p.message).toMatch(/\.$/);
            return;
          }
          for (const chat of p.chats) {
            expect(chat.messages.length).toBeGreaterThan(0);
            for (const m of chat.messages) expect(Number.isFinite(m.time.getTime())).toBe(true);
            chatRows(chat);
          }
          for (const placed of placeEntries(p.entries, new Map())) {
            if (placed)
              expect(parsePath(placed.path)).toMatchObject({ ok: true, path: placed.path });
          }
        },
      ),
      { numRuns: 300, seed: 24 },
    );
  });
});
