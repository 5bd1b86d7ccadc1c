// Keep in sync under churn (docs/sync.md): three devices (Chromium profiles, each its own
// storage) with Keep in sync on against a server of the CouchDB replication protocol, and a seeded
// run of saves, edits, moves, deletes, restores and chat messages on them while devices go
// offline and back and the server is stopped and started again. Then, with everyone back, Keep in
// sync alone must bring every device to the same entries, history and chats; every save is in a
// live entry or in history (an earlier version, a moved or deleted one, a conflict's loser), every
// message is there once, nothing is doubled, no page raised an uncaught error, and each header
// counts the entries the device holds. `npm test` runs one short seed; `npm run test:reliability`
// runs SYNC_SOAK_SEEDS seeds (default 3) of SYNC_SOAK_OPS steps (default 800) each.
import fc from 'fast-check';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSyncServer, type TestSyncServer } from '../sync-server';
import { buildAndServe, call, newProfile, openApp, type Served } from './browser';
import { HANG_MS, LONG, check, testTimeout, within } from './config';
import {
  DEVICES,
  PATHS,
  accountingProblems,
  churnArb,
  digestDiff,
  digestOf,
  type Backup,
  type Digest,
  type Op,
} from './sync-soak';

function envInt(name: string, fallback: number): number {
  const n = Number(process.env[name] ?? '');
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}

const SEEDS = LONG ? envInt('SYNC_SOAK_SEEDS', 3) : 1;
const OPS = LONG ? envInt('SYNC_SOAK_OPS', 800) : 40;
/** How long Keep in sync may take to bring the devices together once the churn stops. */
const CONVERGE_MS = 120_000;

let served: Served;
beforeAll(async () => {
  served = await buildAndServe();
});
afterAll(() => served?.close());

interface Device {
  context: BrowserContext;
  page: Page;
  /** Uncaught errors of the page and of its memory worker (which Chromium reports to the page). */
  errors: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function backupOf(page: Page): Promise<Backup> {
  const json = await call<string | { message: string }>(page, 'exportJson');
  if (typeof json !== 'string') throw new Error(`exportJson failed: ${json.message}`);
  return JSON.parse(json) as Backup;
}

/** One seed's run: devices opened, the churn applied, convergence awaited and checked. */
async function soak(ops: Op[], seedLabel: string): Promise<void> {
  const couch: TestSyncServer = await startSyncServer();
  const devices: Device[] = [];
  const tokens: string[] = [];
  const messages: string[] = [];
  const tally = new Map<string, number>();
  const count = (what: string) => tally.set(what, (tally.get(what) ?? 0) + 1);
  try {
    for (let d = 0; d < DEVICES; d++) {
      const context = await newProfile(served);
      const { page } = await openApp(served, context);
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(`${e.name}: ${e.message}`));
      devices.push({ context, page, errors });
    }
    const config = {
      url: couch.url,
      database: 'soak',
      username: '',
      password: '',
      encrypt: false,
      passphrase: '',
      live: true,
    };
    for (const { page } of devices) {
      const s = await within(call<{ state: string }>(page, 'configureSync', config), 'sync start');
      expect(s.state).toBe('live');
    }

    // Writes on different devices run at once (up to one per device), so that devices change
    // the same entry at the same moment; disruptions and pauses run alone.
    const batches: { op: Op; n: number }[][] = [];
    for (const [n, op] of ops.entries()) {
      const last = batches.at(-1);
      const write =
        op.k !== 'offline' && op.k !== 'online' && op.k !== 'restart' && op.k !== 'pause';
      const fits =
        write &&
        last &&
        last.every((x) => 'd' in x.op && x.op.k !== 'offline' && x.op.k !== 'online') &&
        !last.some((x) => 'd' in x.op && 'd' in op && x.op.d === op.d);
      if (fits) last.push({ op, n });
      else batches.push([{ op, n }]);
    }
    const step = async ({ op, n }: { op: Op; n: number }) => {
      const at = `step ${n} (${JSON.stringify(op)})`;
      const page = 'd' in op ? devices[op.d].page : undefined;
      const run = async () => {
        switch (op.k) {
          case 'save': {
            const token = `w${n}`;
            const r = await call<{ status: string }>(
              page!,
              'saveMemory',
              PATHS[op.p],
              { w: token, by: op.d },
              0,
            );
            if (r.status === 'SUCCESS') tokens.push(token);
            count(`save ${r.status}`);
            break;
          }
          case 'move': {
            if (op.p === op.q) break;
            const r = await call<{ status: string }>(page!, 'moveMemory', PATHS[op.p], PATHS[op.q]);
            count(`move ${r.status}`);
            break;
          }
          case 'delete': {
            const r = await call<{ status: string }>(page!, 'deleteMemory', PATHS[op.p]);
            count(`delete ${r.status}`);
            break;
          }
          case 'restore': {
            const h = await call<{ status: string; versions?: { id: number }[] }>(
              page!,
              'getHistory',
              PATHS[op.p],
            );
            const versions = h.versions ?? [];
            if (!versions.length) break;
            const r = await call<{ status: string }>(
              page!,
              'restoreMemory',
              versions[op.i % versions.length].id,
            );
            count(`restore ${r.status}`);
            break;
          }
          case 'chat': {
            const text = `m${n}`;
            const convs = await call<{ id: number; created: string }[]>(page!, 'listConversations');
            const ordered = [...convs].sort((x, y) => (x.id ?? 0) - (y.id ?? 0));
            let id = ordered[op.c]?.id;
            if (id === undefined) {
              const made = await call<{ status: string; id: number }>(
                page!,
                'createConversation',
                `chat ${text}`,
              );
              id = made.id;
            }
            const r = await call<{ status: string }>(page!, 'addMessage', {
              conversationId: id,
              role: 'user',
              text,
            });
            if (r.status === 'SUCCESS') messages.push(text);
            count(`message ${r.status}`);
            break;
          }
          case 'offline':
          case 'online':
            await devices[op.d].context.setOffline(op.k === 'offline');
            count(op.k);
            break;
          case 'restart':
            await couch.stop();
            await sleep(op.downMs);
            await couch.start();
            count('server restart');
            break;
          case 'pause':
            await sleep(op.ms);
            break;
        }
      };
      await within(run(), at);
    };
    for (const batch of batches) await Promise.all(batch.map(step));

    // Everyone back: Keep in sync alone must bring the devices together.
    for (const d of devices) await d.context.setOffline(false);
    let digests: Digest[] = [];
    let backups: Backup[] = [];
    let settled = 0;
    const started = Date.now();
    let last = '';
    while (Date.now() - started < CONVERGE_MS) {
      backups = await Promise.all(devices.map((d) => within(backupOf(d.page), 'exportJson')));
      digests = backups.map(digestOf);
      const same = digests.every((g) => JSON.stringify(g) === JSON.stringify(digests[0]));
      const text = JSON.stringify(digests[0]);
      // Converged: the same on every device, and unchanged since the last look.
      settled = same && text === last ? settled + 1 : 0;
      last = same ? text : '';
      if (settled >= 2) break;
      await sleep(1000);
    }
    // The backup leaves out which history rows lost a conflict: getHistory says, per path.
    const losers = await Promise.all(
      devices.map(async (d) => {
        const rows: string[] = [];
        for (const path of PATHS) {
          const h = await call<{ versions?: { content: unknown; conflictFrom?: string }[] }>(
            d.page,
            'getHistory',
            path,
          );
          for (const v of h.versions ?? [])
            if (v.conflictFrom) rows.push(JSON.stringify([path, v.content, v.conflictFrom]));
        }
        return rows.sort();
      }),
    );
    const report = [...tally].map(([k, v]) => `${k} ×${v}`).join(', ');
    console.info(
      `sync soak ${seedLabel}: ${ops.length} steps (${report}); ` +
        `${batches.filter((b) => b.length > 1).length} concurrent batches; ` +
        `${digests[0]?.entries.length} entries, ${digests[0]?.history.length} history rows ` +
        `(${losers[0].length} conflict losers), ` +
        `${digests[0]?.messages.length} messages; converged in ${Date.now() - started} ms`,
    );
    for (let d = 1; d < DEVICES; d++)
      expect(
        digestDiff(digests[0], digests[d]),
        `device 0 and device ${d} differ ${CONVERGE_MS / 1000} s after the churn`,
      ).toBe('');
    expect(settled, 'the devices kept changing').toBeGreaterThanOrEqual(2);
    for (let d = 1; d < DEVICES; d++)
      expect(losers[d], `device ${d}: conflict losers in history`).toEqual(losers[0]);
    expect(accountingProblems(backups[0], { tokens, messages })).toEqual([]);
    for (const [d, dev] of devices.entries()) {
      expect(dev.errors, `device ${d}: uncaught errors`).toEqual([]);
      // The header counts what the device holds.
      const held = backups[d].entries.length;
      const words = held === 1 ? '1 entry' : `${held} entries`;
      await expect
        .poll(async () => (await dev.page.locator('sm-app .stats').first().textContent()) ?? '', {
          timeout: HANG_MS,
        })
        .toContain(words);
    }
  } finally {
    for (const d of devices) await d.context.close().catch(() => undefined);
    await couch.close();
  }
}

describe('Keep in sync under churn', () => {
  it(
    `${SEEDS} seed(s) of ${OPS} steps on ${DEVICES} devices converge with nothing lost or doubled`,
    async () => {
      let run = 0;
      await check(
        'sync soak',
        fc.asyncProperty(churnArb(OPS), async (ops) => {
          run++;
          await soak(ops, `run ${run} of ${SEEDS}`);
        }),
        { runs: SEEDS, shrink: false },
      );
    },
    testTimeout(SEEDS, OPS * 2_000 + CONVERGE_MS + 60_000),
  );
});
