// Reliability in Chromium, on the production build driven as a person drives it: the page closed
// in the middle of an import, the storage quota exhausted (DevTools' Storage.overrideQuotaForOrigin),
// and a hostile model server behind the chat. After each case: no page error, the store as before
// or as fully after, nothing from content executed, and the UI still answers.
import fc from 'fast-check';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeKind, type FakeReply } from '../fixtures/fake-llm';
import { MARKUP } from './arbitraries';
import {
  buildAndServe,
  call,
  digest,
  expectInert,
  expectResponsive,
  holdWorkerAtWrite,
  newProfile,
  openApp,
  type Served,
  type StoreDigest,
} from './browser';
import { HANG_MS, Tally, check, runCount, testTimeout, within } from './config';
import { startEndlessServer } from './endless-llm';

let served: Served;

beforeAll(async () => {
  served = await buildAndServe();
});
afterAll(() => served?.close());

/** A backup of `n` entries whose content carries markup, as an export of the app makes it. */
function backupFile(
  n: number,
  tag: string,
): { name: string; text: string; entries: [string, string][] } {
  const at = '2025-01-01T00:00:00.000Z';
  const entries = Array.from({ length: n }, (_, i) => ({
    path: `${tag}/E${i}`,
    content: { i, note: MARKUP[i % MARKUP.length], text: 'lorem ipsum '.repeat(40) },
    contextChunks: [],
    version: 1,
    created: at,
    modified: at,
    accessed: at,
  }));
  return {
    name: `${tag}.json`,
    text: JSON.stringify({ format: 'structured-memory-backup', version: 1, entries }),
    entries: entries.map((e): [string, string] => [e.path, JSON.stringify(e.content)]),
  };
}

/** The digest after merging `file` into `before`. */
function merged(before: StoreDigest, file: { entries: [string, string][] }): [string, string][] {
  const byPath = new Map(before.entries);
  for (const [p, c] of file.entries) byPath.set(p, c);
  return [...byPath].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Picks a JSON file in the Import button's input and chooses Merge. */
async function startImport(page: Page, file: { name: string; text: string }): Promise<void> {
  await page.locator('sm-data-menu input[type=file]').setInputFiles({
    name: file.name,
    mimeType: 'application/json',
    buffer: Buffer.from(file.text),
  });
  await page.getByRole('button', { name: 'Merge' }).click({ timeout: HANG_MS });
}

/** Waits for the import dialog's outcome: its heading. */
async function importOutcome(page: Page): Promise<string> {
  const heading = page
    .locator('sm-data-menu dialog h2')
    .filter({ hasText: /Import finished|Nothing was imported|Import failed/ });
  await heading.waitFor({ timeout: HANG_MS });
  const text = (await heading.textContent()) ?? '';
  await page.locator('sm-data-menu dialog').getByRole('button', { name: 'Close' }).click();
  return text;
}

/** Messages whose tool call no stored assistant message made (a history servers refuse). */
const orphans = (d: StoreDigest) => {
  const made = new Set(d.messages.flatMap((m) => m.calls));
  return d.messages.filter((m) => m.role === 'tool' && !made.has(m.answers ?? ''));
};

/** Bytes the origin uses (IndexedDB: service workers are blocked). */
const usageOf = async (page: Page) =>
  (await page.evaluate(() => navigator.storage.estimate())).usage ?? 0;

/** What a fresh profile uses once the app has started and saved one entry. */
let seedUsage: number | undefined;

describe('reliability in Chromium', () => {
  const CLOSE_RUNS = runCount(1, 'browser');

  it(
    'the page closed in the middle of an import leaves the store as before or as after it',
    async () => {
      const seen = new Tally();
      await check(
        'Chromium: page closed mid-import',
        // 0: closed right after Merge; n: closed while the worker is stopped at its nth write
        // of the import (past the import's last write: closed after it finished).
        fc.asyncProperty(fc.integer({ min: 0, max: 260 }), async (at) => {
          const label = at === 0 ? 'closed right after Merge' : `closed at write ${at}`;
          const context = await newProfile(served);
          try {
            const first = await openApp(served, context);
            await call(first.page, 'saveMemory', 'Seed/Keep', { keep: MARKUP[0] });
            seedUsage ??= await usageOf(first.page);
            const before = await digest(first.page);
            const file = backupFile(120, 'Closed');
            let outcome = 'closed before it ended';
            if (at === 0) {
              await startImport(first.page, file);
            } else {
              const { held } = await holdWorkerAtWrite(first.page, at);
              await startImport(first.page, file);
              const finished = importOutcome(first.page).then(
                (h) => void (outcome = h),
                () => undefined, // the page closed while it was waiting: that is the case
              );
              await within(Promise.race([held, finished]), `${label}: the import`);
            }
            expect(first.errors, `${label}: page errors`).toEqual([]);
            await first.page.close();
            seen.add(`${at === 0 ? 'at once' : 'at a write'}: ${outcome}`);

            const second = await openApp(served, context);
            const after = await digest(second.page);
            const full = merged(before, file);
            const state =
              JSON.stringify(after.entries) === JSON.stringify(before.entries)
                ? 'before'
                : JSON.stringify(after.entries) === JSON.stringify(full)
                  ? 'after'
                  : 'partial';
            seen.add(`store ${state}`);
            expect(state, `${label}: the store holds part of the import`).not.toBe('partial');
            if (outcome === 'Import finished') expect(state, label).toBe('after');
            expect(after.history, label).toBe(before.history);
            const tree = second.page.getByRole('tree', { name: 'Memory' });
            await tree.getByRole('treeitem', { name: 'Seed' }).waitFor({ timeout: HANG_MS });
            await expectInert(second.page, label);
            await expectResponsive(second.page, label);
            // The same import now completes.
            await startImport(second.page, file);
            expect(await importOutcome(second.page), label).toBe('Import finished');
            expect((await digest(second.page)).entries, label).toEqual(full);
            expect(second.errors, `${label}: page errors`).toEqual([]);
          } finally {
            await context.close();
          }
        }),
        { runs: CLOSE_RUNS, shrink: false },
      );
      seen.print('Chromium: page closed mid-import');
    },
    testTimeout(CLOSE_RUNS, 3 * HANG_MS),
  );

  const QUOTA_RUNS = runCount(1, 'browser');

  it(
    'the storage quota runs out: an import and a save fail whole, say so, and the app goes on',
    async () => {
      const seen = new Tally();
      // What the app and its seed use in a fresh profile (measured by the case above, when it ran).
      if (seedUsage === undefined) {
        const context = await newProfile(served);
        try {
          const { page } = await openApp(served, context);
          await call(page, 'saveMemory', 'Seed/Keep', { keep: MARKUP[0] });
          seedUsage = await usageOf(page);
        } finally {
          await context.close();
        }
      }
      const usage = seedUsage;
      await check(
        'Chromium: storage quota exhausted',
        fc.asyncProperty(
          fc.constantFrom(-usage / 2, 0, 20_000, 100_000, 300_000, 1_000_000, 100_000_000),
          async (room) => {
            const quota = Math.max(0, Math.round(usage + room));
            const label = `quota ${quota} bytes (${room} over the seed)`;
            const profile = await newProfile(served);
            try {
              const page = await profile.newPage();
              const cdp = await profile.newCDPSession(page);
              // Before the app opens its database, so its first space check sees this quota.
              await cdp.send('Storage.overrideQuotaForOrigin', {
                origin: served.origin,
                quotaSize: quota,
              });
              const app = await openApp(served, profile, page);
              const seeded = await call<{ status: string; code?: string }>(
                page,
                'saveMemory',
                'Seed/Keep',
                {
                  keep: MARKUP[0],
                },
              );
              seen.add(`seed: ${seeded.code ?? seeded.status}`);
              const before = await digest(page);
              const file = backupFile(150, 'Quota');
              await startImport(page, file);
              const outcome = await importOutcome(page);
              seen.add(`import: ${outcome}`);
              const afterImport = await digest(page);
              if (outcome === 'Import finished')
                expect(afterImport.entries, label).toEqual(merged(before, file));
              else
                expect(afterImport, `${label}: a failed import changed the store`).toEqual(before);
              // A save as the chat's tool makes it.
              const content = { plan: MARKUP[1], pad: 'p'.repeat(20_000) };
              const saved = await call<{ status: string; code?: string }>(
                page,
                'saveMemory',
                'Quota/Save',
                content,
              );
              seen.add(`save: ${saved.code ?? saved.status}`);
              const afterSave = await digest(page);
              const stored = afterSave.entries.find(([p]) => p === 'Quota/Save');
              if (saved.status === 'SUCCESS')
                expect(stored?.[1], label).toBe(JSON.stringify(content));
              else {
                expect(saved.code, label).toBe('STORAGE_FULL');
                expect(afterSave, `${label}: a failed save changed the store`).toEqual(afterImport);
              }
              expect(app.errors, `${label}: page errors`).toEqual([]);
              await expectInert(page, label);
              await expectResponsive(page, label);
              // With the quota back, the same import completes.
              await cdp.send('Storage.overrideQuotaForOrigin', { origin: served.origin });
              await startImport(page, file);
              expect(await importOutcome(page), `${label}, quota back`).toBe('Import finished');
              expect(app.errors, `${label}: page errors`).toEqual([]);
            } finally {
              await profile.close();
            }
          },
        ),
        { runs: QUOTA_RUNS, shrink: false },
      );
      seen.print('Chromium: storage quota exhausted');
    },
    testTimeout(QUOTA_RUNS + 1, 3 * HANG_MS),
  );

  const SERVER_RUNS = runCount(1, 'browser');

  type Hostile =
    | { kind: 'endless'; endless: 'tokens' | 'silent' | 'flood-text'; stopAfter: number }
    | { kind: 'huge-blob' | 'many-calls' | 'invalid-json' | 'markup'; server: FakeKind };

  const hostile: fc.Arbitrary<Hostile> = fc.oneof(
    fc.record({
      kind: fc.constant('endless' as const),
      endless: fc.constantFrom('tokens' as const, 'silent' as const, 'flood-text' as const),
      stopAfter: fc.integer({ min: 1, max: 30 }),
    }),
    fc.record({
      kind: fc.constantFrom(
        'huge-blob' as const,
        'many-calls' as const,
        'invalid-json' as const,
        'markup' as const,
      ),
      server: fc.constantFrom<FakeKind>('koboldcpp', 'llamacpp', 'ollama', 'plain'),
    }),
  );

  function replyOf(kind: 'huge-blob' | 'many-calls' | 'invalid-json' | 'markup'): FakeReply {
    switch (kind) {
      case 'huge-blob': {
        const text = 'QmFzZTY0IGRhdGE'.repeat(Math.ceil((5 << 20) / 15));
        return {
          text,
          chunks: Array.from({ length: 20 }, (_, i) =>
            text.slice(i * (text.length / 20), (i + 1) * (text.length / 20)),
          ),
        };
      }
      case 'many-calls':
        return {
          toolCalls: Array.from({ length: 30 }, (_, i) => ({
            name: i % 3 === 2 ? 'queryMemory' : 'saveMemory',
            arguments: { path: `Many/P${i}`, content: { i, note: MARKUP[i % MARKUP.length] } },
          })),
        };
      case 'invalid-json':
        return {
          toolCalls: [
            { name: 'saveMemory', arguments: '{"path": "Bad/One", "content": ' },
            {
              name: 'saveMemory',
              arguments: `{"path": "Bad/Two", "content": "${MARKUP[1].replace(/"/g, '\\"')}"}}`,
            },
          ],
        };
      case 'markup':
        return {
          text: `${MARKUP[0]} ${MARKUP[1]} ${MARKUP[5]}`,
          toolCalls: [
            { name: 'saveMemory', arguments: { path: 'Markup/Saved', content: MARKUP.join('\n') } },
          ],
        };
    }
  }

  it(
    'a hostile model server: the turn ends (Stop, an error or an answer), markup stays text, the next turn works',
    async () => {
      const seen = new Tally();
      await check(
        'Chromium: hostile model server',
        fc.asyncProperty(hostile, async (h) => {
          const label =
            h.kind === 'endless'
              ? `endless ${h.endless}, Stop after ${h.stopAfter}`
              : `${h.kind} from ${h.server}`;
          const model = MARKUP[1];
          const endless =
            h.kind === 'endless'
              ? await startEndlessServer({ dialect: 'llamacpp', kind: h.endless, model })
              : undefined;
          const fake =
            h.kind === 'endless'
              ? undefined
              : await startFakeServer(h.server, {
                  model,
                  replies: [replyOf(h.kind), { text: 'Done.' }],
                  defaultReply: { text: 'Recovered.' },
                  firstEventDelayMs: 0,
                  toolDelayMs: 0,
                  tokenDelayMs: 0,
                  idleTimeoutMs: 120_000,
                });
          const url = endless?.url ?? fake!.url;
          const context = await newProfile(served);
          try {
            const { page, errors } = await openApp(served, context);
            await page.getByRole('button', { name: 'Settings', exact: true }).click();
            await page.getByRole('textbox', { name: 'Endpoint URL' }).fill(url);
            await page.getByRole('button', { name: 'Save' }).click();
            // The model name is markup; it shows as text.
            await page.getByRole('status').filter({ hasText: model }).waitFor({ timeout: HANG_MS });
            const stop = page.getByRole('button', { name: 'Stop' });
            await page.getByRole('textbox', { name: 'Message' }).fill('Do your worst.');
            await page.getByRole('button', { name: 'Send' }).click();
            if (endless && h.kind === 'endless' && h.endless !== 'flood-text') {
              await within(
                endless.reached(h.endless === 'silent' ? 1 : h.stopAfter),
                `${label}: the stream`,
              );
              await stop.click();
            }
            await expect
              .poll(() => stop.isDisabled(), {
                timeout: HANG_MS,
                message: `${label}: the turn never ended`,
              })
              .toBe(true);
            const alert = await page.locator('sm-chat [role=alert]').allTextContents();
            seen.add(`${label.replace(/ \d+$/, '')}: ${alert.length ? 'alert' : 'no alert'}`);
            expect(errors, `${label}: page errors`).toEqual([]);
            await expectInert(page, label);
            expect(orphans(await digest(page)), `${label}: the stored chat is broken`).toEqual([]);
            // The next turn is answered.
            await page.getByRole('textbox', { name: 'Message' }).fill('And now?');
            await page.getByRole('button', { name: 'Send' }).click();
            await page
              .locator('sm-chat')
              .getByText(/^(Recovered|Done)\.$/)
              .last()
              .waitFor({ timeout: HANG_MS });
            await expectResponsive(page, label);
            await expectInert(page, `${label}, next turn`);
            expect(errors, `${label}: page errors`).toEqual([]);
          } finally {
            await context.close();
            await endless?.close();
            await fake?.close();
          }
        }),
        { runs: SERVER_RUNS, shrink: false },
      );
      seen.print('Chromium: hostile model server');
    },
    testTimeout(SERVER_RUNS, 4 * HANG_MS),
  );
});
