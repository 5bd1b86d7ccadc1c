// `npm run bench:browser -- --only=live`: how soon a write shows in the views that observe memory
// (issue 14: the tree, the map, an entry's detail and the conversation list follow the worker's
// change feed), for a write from this tab and from a second tab of the same browser, and that no
// view reads everything again. The production app (bundled model) is built and served as the
// end-to-end tests do, opened twice in Debian's Chromium (a persistent profile: IndexedDB on
// disk), filled with `--live-entries` entries and a few dozen conversations; then, per view,
// `--live-writes` writes from each tab, in `--live-runs` runs. For each write the observing page
// records (performance.timeOrigin + performance.now(), comparable between the two tabs):
//  - when the write was called (in the writing tab),
//  - when the worker's change report naming the write reached the page (the Comlink message
//    to the page's change listener, seen before the app's own handler runs),
//  - when the view's DOM first showed the write (a MutationObserver on the view's shadow root
//    with a check of what the view shows),
// and in which animation frame after the report the change was painted (1: the first frame).
// Every call a page sends its worker is counted; those that read a whole view's data again
// (FULL_READS) should not occur while the writes run. Results: bench/results-browser-live.json
// (a --quick run: bench/results-browser-live-quick.json).
import { mkdtemp, rm } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { summarise, type Summary } from './core/report';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../test/e2e/chromium';
import { backup, buildAndServe, type SeedEntry } from '../test/e2e/explorer-fixture';

export interface LiveOptions {
  quick: boolean;
  log: (line: string) => void;
}

const arg = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

/** Calls that read a whole view's data (or all of memory) again. */
const FULL_READS = [
  'memoryIndex',
  'listConversations',
  'memoryOutline',
  'listMemory',
  'listTrash',
  'exportJson',
  'exportMarkdown',
];
const VIEWS = ['tree', 'map', 'detail', 'conversations'] as const;
type View = (typeof VIEWS)[number];
const TABS = ['this', 'other'] as const;
type Tab = (typeof TABS)[number];
/** How long a write may take to show before it counts as missed. */
const SHOW_LIMIT_MS = 10_000;
/** Pause between writes (lets the app's debounced follow-ups, such as its stats, run). */
const GAP_MS = 80;
const CONVERSATIONS = 40;
/** The heading the benchmark writes under: sorts first, so its rows stay in the tree's window. */
const LIVE = 'A-Live';

/**
 * The pages' probe, installed before the app loads (as source: a function from this module
 * would carry the bundler's helpers into the page). It counts calls to workers, notes the
 * change reports that reach the page, counts animation frames (its callback is the first of
 * each frame; `inFrame` holds from it until the first task after the frame's rendering), and
 * arms a MutationObserver on the view under test.
 */
const PROBE = `(() => {
  const now = () => performance.timeOrigin + performance.now();
  const live = { calls: [], reports: [], frames: 0, inFrame: false, pending: null };
  window.__live = live;
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (data, ...rest) {
    if (data && data.type === 'APPLY' && Array.isArray(data.path)) live.calls.push(data.path.join('.'));
    return post.call(this, data, ...rest);
  };
  const ch = new MessageChannel();
  ch.port1.onmessage = () => { live.inFrame = false; };
  requestAnimationFrame(function frame() {
    live.frames++;
    live.inFrame = true;
    ch.port2.postMessage(0);
    requestAnimationFrame(frame);
  });
  const add = MessagePort.prototype.addEventListener;
  MessagePort.prototype.addEventListener = function (type, listener, ...rest) {
    if (type === 'message' && typeof listener === 'function') {
      const inner = listener;
      listener = function (ev) {
        const d = ev.data;
        const c = d && d.type === 'APPLY' && Array.isArray(d.argumentList) && d.argumentList[0] && d.argumentList[0].value;
        if (c && Array.isArray(c.tables)) {
          const keys = [];
          if (c.entries) for (const e of c.entries.upserted) keys.push(e.path);
          if (c.conversations) for (const x of c.conversations.upserted) keys.push(x.title);
          live.reports.push({ t: now(), frame: live.frames, keys });
          if (live.reports.length > 5000) live.reports.splice(0, 1000);
        }
        return inner.call(this, ev);
      };
    }
    return add.call(this, type, listener, ...rest);
  };
  const find = (root, tag) => {
    const hit = root.querySelector(tag);
    if (hit) return hit;
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) {
        const inner = find(el.shadowRoot, tag);
        if (inner) return inner;
      }
    }
    return null;
  };
  live.find = (tag) => find(document, tag);
  const TAGS = { tree: 'sm-memory-tree', map: 'sm-memory-map', detail: 'sm-entry-detail', conversations: 'sm-conversations' };
  const shows = (view, el, key) => {
    const root = el.shadowRoot;
    if (view === 'tree') {
      for (const n of root.querySelectorAll('.name')) if (n.title === key) return true;
      return false;
    }
    // A block of its own, or (an entry too small to draw, its area in its heading's block)
    // the first redraw after the report that names it.
    if (view === 'map') return el.layout.rects.has(key) || live.reports.some((r) => r.t >= live.armedAt && r.keys.includes(key));
    if (view === 'detail') {
      const pre = root.querySelector('pre.content');
      return !!pre && pre.textContent.includes(key);
    }
    for (const n of root.querySelectorAll('.title')) if (n.textContent === key) return true;
    return false;
  };
  live.arm = (view, key, limit) => {
    const el = find(document, TAGS[view]);
    if (!el || !el.shadowRoot) throw new Error('no ' + TAGS[view]);
    if (shows(view, el, key)) throw new Error(view + ' already shows ' + key);
    live.armedAt = now();
    live.pending = new Promise((resolve) => {
      const mo = new MutationObserver(() => {
        if (!shows(view, el, key)) return;
        const t = now();
        const inFrame = live.inFrame;
        const drawn = view === 'map' ? el.layout.rects.has(key) : null;
        const shownFrame = inFrame ? live.frames : live.frames + 1;
        mo.disconnect();
        clearTimeout(timer);
        resolve({ t, shownFrame, inFrame, drawn });
      });
      mo.observe(el.shadowRoot, { subtree: true, childList: true, attributes: true, characterData: true });
      const timer = setTimeout(() => {
        mo.disconnect();
        // Not shown: what the view holds (a development aid, logged by the runner).
        const diag = { shows: shows(view, el, key), hidden: el.closest('[hidden]') !== null };
        if (view === 'map') Object.assign(diag, { width: el.width, height: el.height, entries: el.entries.length, hasEntry: el.entries.some((e) => e.path === key), stale: el.stale, cells: el.cellCount });
        resolve({ missed: diag });
      }, limit);
    });
  };
  /** What the armed view saw, with the latest report naming reportKey before it showed. */
  live.seen = async (reportKey) => {
    const shown = await live.pending;
    live.pending = null;
    if (shown.missed) return shown;
    let report = null;
    for (const r of live.reports) if (r.t <= shown.t && r.keys.includes(reportKey)) report = r;
    return { ...shown, report };
  };
})();`;

interface LiveWindow {
  __live: {
    calls: string[];
    frames: number;
    arm(view: View, key: string, limit: number): void;
    seen(reportKey: string): Promise<
      | {
          t: number;
          shownFrame: number;
          inFrame: boolean;
          drawn: boolean | null;
          report: { t: number; frame: number } | null;
          missed?: undefined;
        }
      | { missed: Record<string, unknown> }
    >;
    find(tag: string): Element | null;
  };
}
type AppWindow = Window & LiveWindow;

/** One write and what the observing tab saw of it. */
export interface LiveSample {
  view: View;
  tab: Tab;
  run: number;
  /** The write's call until it returned, in the writing tab. */
  writeMs: number;
  /** The write's call until the view's DOM showed it (null: not within SHOW_LIMIT_MS). */
  callToDomMs: number | null;
  /** The change report's arrival in the observing tab until the DOM showed it. */
  reportToDomMs: number | null;
  /** The write's call until its change report arrived in the observing tab. */
  callToReportMs: number | null;
  /** The animation frame after the report's arrival that painted the change (1: the first). */
  frames: number | null;
  /**
   * Whether the DOM changed inside a frame's rendering (a requestAnimationFrame callback, as a
   * patch does) rather than in a task between frames (as the answer to a read does).
   */
  inFrame: boolean | null;
  /** The map: whether the entry got a rectangle of its own (false: too small, in its heading's). */
  drawn?: boolean | null;
}

/** Calls a method of the worker's proxy (on <sm-app>) in `page`; the call's start and end. */
function write(page: Page, method: string, args: unknown[]) {
  return page.evaluate(
    async ([m, a]) => {
      const app = document.querySelector('sm-app') as unknown as {
        memory: Record<string, (...x: unknown[]) => Promise<{ status?: string } | undefined>>;
      };
      const t0 = performance.timeOrigin + performance.now();
      const r = await app.memory[m as string](...(a as unknown[]));
      const t1 = performance.timeOrigin + performance.now();
      return { t0, t1, status: r?.status };
    },
    [method, args] as const,
  );
}

async function callCount(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as AppWindow).__live.calls.length);
}

async function callsSince(page: Page, from: number): Promise<string[]> {
  return page.evaluate((n) => (window as unknown as AppWindow).__live.calls.slice(n), from);
}

async function frameCount(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as AppWindow).__live.frames);
}

async function openApp(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(
    () => !!(document.querySelector('sm-app') as { memory?: unknown } | null)?.memory,
  );
}

/** The memory the benchmark starts from: `n` entries under 15 headings, three levels deep. */
function fillEntries(n: number, runs: number): SeedEntry[] {
  const out: SeedEntry[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      path: `Topic ${i % 15}/Part ${Math.floor(i / 15) % 10}/Note ${Math.floor(i / 150)}`,
      ageDays: (i * 7) % 400,
      content: `Note ${i}: a few words on topic ${i % 15}, kept since day ${(i * 7) % 400}.`,
    });
  }
  out.push({ path: `${LIVE}/Tree/seed`, ageDays: 1, content: 'Where the tree writes go.' });
  out.push({ path: `${LIVE}/Map/seed`, ageDays: 1, content: 'Where the map writes go.' });
  for (let r = 0; r < runs; r++) {
    out.push({ path: `${LIVE}/Detail ${r}`, ageDays: 1, content: 'The open detail (start).' });
  }
  return out;
}

const pct = (s: Summary, k: 'min' | 'median' | 'p95' | 'max') =>
  Number.isFinite(s[k] ?? NaN) ? (s[k] as number).toFixed(1) : '–';

export async function liveViews({ quick, log }: LiveOptions): Promise<void> {
  const started = performance.now();
  const nEntries = Number(arg('live-entries')) || (quick ? 300 : 1500);
  const nWrites = Number(arg('live-writes')) || (quick ? 15 : 90);
  const nRuns = Number(arg('live-runs')) || (quick ? 1 : 3);
  const load: string[] = [];
  const uptime = () => {
    try {
      const line = execFileSync('uptime', { encoding: 'utf8' }).trim();
      load.push(line);
      log(`  ${line}`);
    } catch {
      // no uptime here
    }
  };

  log('building the app (bundled model) as the end-to-end tests do');
  const { server, dispose } = await buildAndServe();
  const profile = await mkdtemp(join(tmpdir(), 'sm-bench-live-'));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
  });
  const version = context.browser()?.version();
  try {
    await context.addInitScript({ content: PROBE });
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (e) => log(`page error: ${e.message}`));
    await openApp(page, server.url);
    const ua = await page.evaluate(() => navigator.userAgent);
    const chromiumVersion = version ?? /Chrome\/([\d.]+)/.exec(ua)?.[1] ?? 'unknown';

    log(`filling memory: ${nEntries} entries and ${CONVERSATIONS} conversations`);
    const fillStart = performance.now();
    const imported = await write(page, 'importJson', [
      backup(fillEntries(nEntries, nRuns), Date.now()),
      'replace',
    ]);
    if (imported.status !== 'SUCCESS') throw new Error(`import: ${JSON.stringify(imported)}`);
    const conversationIds: number[] = [];
    for (let i = 0; i < CONVERSATIONS; i++) {
      const r = await page.evaluate(async (title) => {
        const app = document.querySelector('sm-app') as unknown as {
          memory: { createConversation(t: string): Promise<{ id: number }> };
        };
        return (await app.memory.createConversation(title)).id;
      }, `Chat ${i}`);
      conversationIds.push(r);
    }
    log(`  ${Math.round(performance.now() - fillStart)} ms`);

    // A fresh load of this tab, then the second tab: both show the filled memory.
    await page.reload();
    await page.getByRole('treeitem', { name: LIVE, exact: true }).waitFor({ timeout: 60_000 });
    const other = await context.newPage();
    other.on('pageerror', (e) => log(`other tab error: ${e.message}`));
    await openApp(other, server.url);
    await other.getByRole('treeitem', { name: LIVE, exact: true }).waitFor({ timeout: 60_000 });
    await page.bringToFront();
    const visibility = {
      this: await page.evaluate(() => document.visibilityState),
      other: await other.evaluate(() => document.visibilityState),
    };
    log(`tabs: this ${visibility.this}, other ${visibility.other}`);
    // The headings the writes go under, open (their twisties: opening selects nothing).
    const twisty = (name: string) =>
      page.getByRole('treeitem', { name, exact: true }).locator('[data-twisty]').click();
    await twisty(LIVE);
    await twisty('Tree');
    await page.getByRole('treeitem', { name: 'seed', exact: true }).first().waitFor();

    const samples: LiveSample[] = [];
    const calls = { this: [] as string[], other: [] as string[] };
    /** Animation frames per second in the observing tab, per view and run. */
    const framesPerS: number[] = [];
    /** Writes not shown within SHOW_LIMIT_MS, and what the view held then. */
    const missed: { view: View; tab: Tab; run: number; key: string; state: unknown }[] = [];
    let serial = 0;
    uptime();
    for (let run = 0; run < nRuns; run++) {
      for (const view of ['detail', 'tree', 'map', 'conversations'] as const) {
        // Open the view.
        if (view === 'detail') {
          // Chosen in the tree, as a user would (the map phase of the run before left the map open).
          await page.locator('sm-explorer').getByRole('tab', { name: 'Tree' }).click();
          const name = `Detail ${run}`;
          await page.getByRole('treeitem', { name, exact: true }).click();
          await page
            .locator('sm-entry-detail')
            .getByRole('heading', { name, level: 2 })
            .waitFor({ timeout: 30_000 });
          await page.locator('sm-entry-detail pre.content').first().waitFor();
        } else if (view === 'tree' || view === 'map') {
          await page
            .locator('sm-explorer')
            .getByRole('tab', { name: view === 'tree' ? 'Tree' : 'Map' })
            .click();
          if (view === 'map') {
            await page.waitForFunction(() => {
              const map = (window as unknown as AppWindow).__live.find(
                'sm-memory-map',
              ) as unknown as { cellCount: number } | null;
              return !!map && map.cellCount > 0;
            });
          }
        }
        // A quiet moment: what the view's opening started has ended.
        await page.waitForTimeout(500);
        const before = { this: await callCount(page), other: await callCount(other) };
        const framesBefore = await frameCount(page);
        const t0 = performance.now();
        for (let i = 0; i < nWrites; i++) {
          for (const tab of TABS) {
            const writer = tab === 'this' ? page : other;
            const k = serial++;
            let method: string;
            let args: unknown[];
            let domKey: string;
            let reportKey: string;
            if (view === 'tree' || view === 'map') {
              // Newest first among its siblings (natural order), so in the tree's window.
              const path = `${LIVE}/${view === 'tree' ? 'Tree' : 'Map'}/w${99_999 - k}`;
              method = 'saveMemory';
              args = [path, `Live write ${k} from the ${tab} tab.`];
              domKey = reportKey = path;
            } else if (view === 'detail') {
              const path = `${LIVE}/Detail ${run}`;
              domKey = `Live detail write ${k} from the ${tab} tab.`;
              method = 'saveMemory';
              args = [path, domKey];
              reportKey = path;
            } else {
              const title = `Live chat ${k} (${tab} tab)`;
              method = 'renameConversation';
              args = [conversationIds[k % conversationIds.length], title];
              domKey = reportKey = title;
            }
            await page.evaluate(
              ([v, key, limit]) => (window as unknown as AppWindow).__live.arm(v, key, limit),
              [view, domKey, SHOW_LIMIT_MS] as const,
            );
            const w = await write(writer, method, args);
            if (w.status !== 'SUCCESS') throw new Error(`${method}: ${JSON.stringify(w)}`);
            const got = await page.evaluate(
              (key) => (window as unknown as AppWindow).__live.seen(key),
              reportKey,
            );
            const seen = got.missed ? null : got;
            if (got.missed) {
              log(`  ${view} missed ${domKey} (${tab} tab): ${JSON.stringify(got.missed)}`);
              missed.push({ view, tab, run, key: domKey, state: got.missed });
            }
            samples.push({
              view,
              tab,
              run,
              writeMs: w.t1 - w.t0,
              callToDomMs: seen ? seen.t - w.t0 : null,
              reportToDomMs: seen?.report ? seen.t - seen.report.t : null,
              callToReportMs: seen?.report ? seen.report.t - w.t0 : null,
              frames: seen?.report ? seen.shownFrame - seen.report.frame : null,
              inFrame: seen ? seen.inFrame : null,
              ...(view === 'map' ? { drawn: seen ? seen.drawn : null } : {}),
            });
            await page.waitForTimeout(GAP_MS);
          }
        }
        // A moment for a late (debounced) read to show in the count.
        await page.waitForTimeout(500);
        const fps = ((await frameCount(page)) - framesBefore) / ((performance.now() - t0) / 1000);
        framesPerS.push(fps);
        calls.this.push(...(await callsSince(page, before.this)));
        calls.other.push(...(await callsSince(other, before.other)));
        const mine = samples.filter((s) => s.run === run && s.view === view);
        const med = (tab: Tab) =>
          pct(
            summarise(mine.filter((s) => s.tab === tab).map((s) => s.callToDomMs ?? NaN)),
            'median',
          );
        log(
          `run ${run + 1} ${view}: ${mine.length} writes in ${Math.round((performance.now() - t0) / 1000)} s; call → DOM median ${med('this')} ms (this tab), ${med('other')} ms (other tab)`,
        );
      }
      uptime();
    }

    // ---- report -------------------------------------------------------------------------
    const histogram = (list: LiveSample[]) => {
      const h = { '1': 0, '2': 0, '3': 0, '4+': 0, 'no report': 0, missed: 0 };
      for (const s of list) {
        if (s.callToDomMs === null) h.missed++;
        else if (s.frames === null) h['no report']++;
        else if (s.frames <= 1) h['1']++;
        else if (s.frames === 2) h['2']++;
        else if (s.frames === 3) h['3']++;
        else h['4+']++;
      }
      return h;
    };
    const countBy = (names: string[]) => {
      const out: Record<string, number> = {};
      for (const n of names) out[n] = (out[n] ?? 0) + 1;
      return out;
    };
    const fullReads = {
      this: calls.this.filter((c) => FULL_READS.includes(c)).length,
      other: calls.other.filter((c) => FULL_READS.includes(c)).length,
    };
    const rows = VIEWS.flatMap((view) =>
      TABS.map((tab) => {
        const list = samples.filter((s) => s.view === view && s.tab === tab);
        const of = (f: (s: LiveSample) => number | null) => summarise(list.map((s) => f(s) ?? NaN));
        return {
          view,
          tab,
          writes: list.length,
          call_to_dom_ms: of((s) => s.callToDomMs),
          report_to_dom_ms: of((s) => s.reportToDomMs),
          call_to_report_ms: of((s) => s.callToReportMs),
          write_ms: of((s) => s.writeMs),
          frames_after_report: histogram(list),
          changed_in_frame: list.filter((s) => s.inFrame).length,
        };
      }),
    );
    console.log(
      `\nLive views — Chromium ${chromiumVersion}, ${nEntries} entries, ${CONVERSATIONS} conversations, ${nWrites} writes per view and tab × ${nRuns} runs`,
    );
    const head = [
      'view',
      'tab',
      'n',
      'call→DOM med',
      'p95',
      'max',
      'report→DOM med',
      'p95',
      'max',
      'frames 1/2/3/4+/none/missed',
      'in rAF',
    ];
    const table = rows.map((r) => [
      r.view,
      r.tab,
      String(r.writes),
      pct(r.call_to_dom_ms, 'median'),
      pct(r.call_to_dom_ms, 'p95'),
      pct(r.call_to_dom_ms, 'max'),
      pct(r.report_to_dom_ms, 'median'),
      pct(r.report_to_dom_ms, 'p95'),
      pct(r.report_to_dom_ms, 'max'),
      Object.values(r.frames_after_report).join('/'),
      `${r.changed_in_frame}/${r.writes}`,
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
    const line = (cells: string[]) =>
      cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
    console.log(line(head));
    for (const row of table) console.log(line(row));
    console.log(
      `Full reads (${FULL_READS.join(', ')}) during the writes: this tab ${fullReads.this}, other tab ${fullReads.other}`,
    );
    const fps = summarise(framesPerS);
    const mapSamples = samples.filter((s) => s.view === 'map' && s.callToDomMs !== null);
    console.log(
      `Map: ${mapSamples.filter((s) => s.drawn).length} of ${mapSamples.length} new entries shown got a rectangle of their own (the rest were too small: their area went to their heading's block)`,
    );
    console.log(
      `Animation frames in the observing tab while the writes ran: ${pct(fps, 'median')} per s (median of the phases; min ${pct(fps, 'min')}, max ${pct(fps, 'max')})`,
    );
    console.log(
      `Calls from the observing tab during the writes: ${JSON.stringify(countBy(calls.this))}`,
    );
    console.log(
      `Calls from the other tab during the writes: ${JSON.stringify(countBy(calls.other))}`,
    );

    const results = {
      date: new Date().toISOString(),
      environment: `Chromium ${chromiumVersion} (headless, Debian), persistent profile, 1280×800; tabs ${visibility.this}/${visibility.other}; ${quick ? 'QUICK run' : 'full run'}`,
      load,
      setup: {
        entries: nEntries,
        conversations: CONVERSATIONS,
        writes_per_view_and_tab: nWrites,
        runs: nRuns,
        gap_ms: GAP_MS,
      },
      what: {
        call_to_dom_ms:
          'the write called (the writing tab) until the view in the observing tab showed it (MutationObserver on its shadow root); both clocks performance.timeOrigin + performance.now()',
        report_to_dom_ms:
          "the worker's change report reached the observing tab (the Comlink message to its change listener) until the view showed it",
        call_to_report_ms: 'the write called until its change report reached the observing tab',
        write_ms: 'the write call until it returned, in the writing tab',
        frames_after_report:
          'the animation frame after the report that painted the change (1: the first); none: no report named the write before the DOM changed; missed: not shown within 10 s',
        changed_in_frame:
          'writes whose DOM change happened inside a frame (a requestAnimationFrame callback: a patch) rather than in a task between frames (the answer to a read)',
        full_reads: `calls to ${FULL_READS.join(', ')} sent by either tab while the writes ran`,
      },
      views: rows,
      full_reads: fullReads,
      frames_per_s: fps,
      missed,
      calls: { this: countBy(calls.this), other: countBy(calls.other) },
      samples,
      total_s: Math.round((performance.now() - started) / 1000),
    };
    const file = quick ? 'results-browser-live-quick.json' : 'results-browser-live.json';
    writeFileSync(new URL(`./${file}`, import.meta.url), JSON.stringify(results, null, 2) + '\n');
    log(`wrote bench/${file} (${results.total_s} s)`);
  } finally {
    await context.close();
    await dispose();
    await rm(profile, { recursive: true, force: true });
  }
}
