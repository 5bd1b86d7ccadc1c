// End to end, in the production build: Settings → Server → In this browser → a model link. A
// model host the test starts on 127.0.0.1 (another origin than the app, with CORS) serves the
// tiny GGUF with Range support, one that ignores Range, one that answers HTML, one that cuts the
// connection mid-file, one without CORS, one too big, and a split model too big for the quota.
// The download shows progress, is kept as it arrives, stops at a reload and resumes from the
// bytes kept (a Range request), and the model it kept chats. What cannot work is refused in a
// sentence before anything but the first bytes is downloaded.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { allowLongReplies, axeScan, buildAndServe, chatAndStop } from './explorer-fixture';
import type { StaticServer } from './static-server';
import { splitGguf } from '../fixtures/split-gguf';
import { makeTinyGguf } from '../fixtures/tiny-gguf';

const POLL = { timeout: 30_000, interval: 50 };
const TINY = makeTinyGguf({ endless: true });
/** Nine parts that each claim 1.9 GB: 17 GB, more than the browser lets a site keep (10 GB). */
const HUGE_PARTS = splitGguf(makeTinyGguf(), 9);
const HUGE_PART_BYTES = 1_900_000_000;
const SPLIT_PARTS = splitGguf(TINY, 3);
/** The tiny model's size as Settings shows it. */
const KB = `${Math.round(TINY.length / 1000)} KB`;

interface Seen {
  path: string;
  range?: string;
  status: number;
}

/** The model host: routes by folder; `trickle` holds a download open, slowly, until released. */
function modelHost() {
  const seen: Seen[] = [];
  const state = { trickle: false, cuts: 0 };
  const cors = {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': 'Content-Range, Content-Length, Accept-Ranges',
  };
  const send = async (
    req: IncomingMessage,
    res: ServerResponse,
    body: Uint8Array,
    o: { range: boolean; total?: number; cutAt?: number },
  ) => {
    const total = o.total ?? body.length;
    const m = o.range ? /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '') : null;
    let start = 0;
    let end = total - 1;
    if (m) {
      start = Number(m[1]);
      end = m[2] ? Math.min(Number(m[2]), total - 1) : total - 1;
    }
    const headers: Record<string, string> = {
      ...cors,
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(end - start + 1),
      'Cache-Control': 'no-store',
      ...(o.range ? { 'Accept-Ranges': 'bytes' } : {}),
    };
    if (m) headers['Content-Range'] = `bytes ${start}-${end}/${total}`;
    const status = m ? 206 : 200;
    seen[seen.length - 1].status = status;
    res.writeHead(status, headers);
    // A file that claims more than it holds is zeros past its real bytes.
    const slice = new Uint8Array(end - start + 1);
    slice.set(body.subarray(start, Math.min(end + 1, body.length)));
    if (o.cutAt !== undefined) {
      res.write(slice.subarray(0, o.cutAt));
      await new Promise((r) => setTimeout(r, 100));
      res.destroy();
      return;
    }
    if (!state.trickle) {
      res.end(slice);
      return;
    }
    // 40% at once, then 2 KB every 50 ms while the test holds it.
    let at = Math.min(slice.length, Math.floor(total * 0.4));
    res.write(slice.subarray(0, at));
    while (at < slice.length && !res.destroyed) {
      await new Promise((r) => setTimeout(r, 50));
      if (!state.trickle) break;
      res.write(slice.subarray(at, at + 2048));
      at += 2048;
    }
    if (!res.destroyed) res.end(slice.subarray(at));
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    seen.push({ path: url.pathname, range: req.headers.range, status: 0 });
    const [, folder, name] = url.pathname.split('/');
    const probe = /^bytes=0-\d+$/.test(req.headers.range ?? '');
    void (async () => {
      if (folder === 'ok') return send(req, res, TINY, { range: true });
      if (folder === 'norange') return send(req, res, TINY, { range: false });
      if (folder === 'cut') {
        // The first whole-file request is cut halfway; later ones (the resume) are served.
        if (!probe && state.cuts++ === 0) {
          return send(req, res, TINY, { range: true, cutAt: TINY.length / 2 });
        }
        return send(req, res, TINY, { range: true });
      }
      if (folder === 'split') {
        const i = Number(/-(\d{5})-of-/.exec(name)?.[1] ?? 0) - 1;
        return send(req, res, SPLIT_PARTS[i], { range: true });
      }
      if (folder === 'huge') {
        const i = Number(/-(\d{5})-of-/.exec(name)?.[1] ?? 0) - 1;
        return send(req, res, HUGE_PARTS[i], { range: true, total: HUGE_PART_BYTES });
      }
      if (folder === 'big') return send(req, res, TINY, { range: true, total: 3e9 });
      if (folder === 'html') {
        seen[seen.length - 1].status = 200;
        res.writeHead(200, { ...cors, 'Content-Type': 'text/html; charset=utf-8' });
        return res.end('<!doctype html><title>Model page</title><p>Download</p>');
      }
      if (folder === 'nocors') {
        seen[seen.length - 1].status = 200;
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        return res.end(TINY);
      }
      seen[seen.length - 1].status = 404;
      res.writeHead(404, cors);
      res.end();
    })();
  });
  return {
    seen,
    state,
    async start() {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('Settings → In this browser → download a model from a link', () => {
  let app: Awaited<ReturnType<typeof buildAndServe>> | undefined;
  let server: StaticServer;
  let browser: Browser | undefined;
  let page: Page;
  const host = modelHost();
  let models = '';

  beforeAll(async () => {
    app = await buildAndServe();
    server = app.server;
    models = await host.start();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(server.url);
  });

  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
    await host.close();
  });

  const dialog = () => page.getByRole('dialog', { name: 'Settings' });
  const openInPage = async () => {
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await dialog().waitFor();
    await dialog().getByRole('combobox', { name: 'Where the model runs' }).selectOption('inpage');
  };
  const linkBox = () => dialog().getByRole('textbox', { name: 'Or download one from a link' });
  const download = async (url: string) => {
    await linkBox().fill(url);
    await dialog().getByRole('button', { name: 'Download', exact: true }).click();
  };
  const alertText = () => dialog().locator('sm-in-page-model').getByRole('alert').textContent();
  /** Names in the models folder and the bytes kept under each (a downloaded part's pieces). */
  const kept = () =>
    page.evaluate(async () => {
      type Dir = FileSystemDirectoryHandle & {
        entries(): AsyncIterable<[string, FileSystemHandle]>;
      };
      const size = async (h: FileSystemHandle): Promise<number> => {
        if (h.kind === 'file') return (await (h as FileSystemFileHandle).getFile()).size;
        let n = 0;
        for await (const [name, c] of (h as Dir).entries())
          if (name.endsWith('.part')) n += await size(c);
        return n;
      };
      const root = (await (
        await navigator.storage.getDirectory()
      ).getDirectoryHandle('models', {
        create: true,
      })) as Dir;
      const out: Record<string, number> = {};
      for await (const [name, h] of root.entries()) out[name] = await size(h);
      return out;
    });
  const chat = (text: string) => chatAndStop(page, text, POLL);
  /** The bytes of a kept model, as the engine gets them (every part, in order). */
  const keptHash = async (name: string) => {
    const bytes = await page.evaluate(async (n) => {
      const root = await (await navigator.storage.getDirectory()).getDirectoryHandle('models');
      const dir = await root.getDirectoryHandle(n);
      const names: string[] = [];
      for await (const key of (dir as unknown as { keys(): AsyncIterable<string> }).keys())
        if (key.endsWith('.part')) names.push(key);
      names.sort();
      const parts: File[] = [];
      for (const p of names) parts.push(await (await dir.getFileHandle(p)).getFile());
      return [...new Uint8Array(await new Blob(parts).arrayBuffer())];
    }, name);
    return sha(new Uint8Array(bytes));
  };

  it('refuses, before downloading, a web page, a server without CORS, a file too big, and a model over the quota', async () => {
    await openInPage();
    await dialog().getByText('Suggested models').click();
    await expect
      .poll(() => dialog().getByRole('button', { name: 'Use Qwen2.5 0.5B Instruct' }).count(), POLL)
      .toBe(1);
    await page.screenshot({ path: '/tmp/sm-download-suggested-desktop.png' });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: '/tmp/sm-download-suggested-phone.png' });
    await page.setViewportSize({ width: 1280, height: 800 });
    // A suggestion fills the link (nothing is fetched until Download).
    await dialog().getByRole('button', { name: 'Use Llama 3.2 1B Instruct' }).click();
    expect(await linkBox().inputValue()).toMatch(
      /^https:\/\/huggingface\.co\/.*\/resolve\/main\/Llama-3\.2-1B-Instruct-Q4_K_M\.gguf$/,
    );
    expect(await axeScan(page, server)).toEqual([]);

    await download(`${models}/html/model.gguf`);
    await expect
      .poll(alertText, POLL)
      .toBe(
        "This link gives a web page, not the GGUF file model.gguf: copy the file's download link (on Hugging Face, …/resolve/…), not its page.",
      );
    await download(`${models}/nocors/model.gguf`);
    await expect
      .poll(alertText, POLL)
      .toMatch(
        /^127\.0\.0\.1:\d+ could not be reached, or it does not let this page download from it \(CORS\)/,
      );
    await download(`${models}/big/big.gguf`);
    await expect.poll(alertText, POLL).toMatch(/^big\.gguf is over 2 GB, more than WebAssembly/);
    await download(`${models}/huge/huge-00001-of-00009.gguf`);
    await expect
      .poll(alertText, POLL)
      .toMatch(
        /^huge-00001-of-00009\.gguf needs 17 GB, and this browser lets this site keep only [\d.]+ [GM]B more: free space on this disk, delete a model kept here, or choose a smaller model\.$/,
      );
    await page.screenshot({ path: '/tmp/sm-download-refused-desktop.png' });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: '/tmp/sm-download-refused-phone.png' });
    await page.setViewportSize({ width: 1280, height: 800 });
    // Only the first bytes of each were asked for; nothing was kept.
    const asked = host.seen.filter((s) => /^\/(big|huge)\//.test(s.path));
    expect(asked.length).toBe(10);
    expect(asked.every((s) => s.range === 'bytes=0-262143')).toBe(true);
    expect(await kept()).toEqual({});
  });

  it('shows progress, keeps the download at a reload, resumes it from the bytes kept, and chats with it', async () => {
    host.state.trickle = true;
    await download(`${models}/ok/tiny.gguf`);
    await expect
      .poll(
        () =>
          dialog()
            .getByText(new RegExp(`^\\d+ KB of ${KB} \\(\\d+%\\)$`))
            .count(),
        POLL,
      )
      .toBe(1);
    // Kept as it arrives: wait for a piece committed to the browser's storage.
    await expect.poll(async () => (await kept())['tiny.gguf'] ?? 0, POLL).toBeGreaterThan(0);
    await page.screenshot({ path: '/tmp/sm-download-progress-desktop.png' });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: '/tmp/sm-download-progress-phone.png' });
    await page.setViewportSize({ width: 1280, height: 800 });
    const atReload = (await kept())['tiny.gguf'];
    await page.reload();
    host.state.trickle = false;
    const stoppedAt = (await kept())['tiny.gguf'];
    expect(stoppedAt).toBeGreaterThanOrEqual(atReload);
    expect(stoppedAt).toBeLessThan(TINY.length);
    await openInPage();
    await expect
      .poll(
        () =>
          dialog()
            .getByText(/^The download of tiny\.gguf stopped at/)
            .count(),
        POLL,
      )
      .toBe(1);
    const before = host.seen.length;
    await dialog().getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => dialog().getByText('tiny.gguf', { exact: true }).count(), POLL).toBe(1);
    // It went on from the bytes kept, and what is kept is the file, byte for byte.
    const resumed = host.seen.slice(before).filter((s) => s.path === '/ok/tiny.gguf');
    expect(resumed.map((s) => [s.range, s.status])).toContainEqual([`bytes=${stoppedAt}-`, 206]);
    expect(await keptHash('tiny.gguf')).toBe(sha(TINY));
    expect(await dialog().getByText(`${KB}, kept in this browser`, { exact: true }).count()).toBe(
      1,
    );

    await allowLongReplies(dialog());
    await dialog().getByRole('button', { name: 'Save' }).click();
    await dialog().waitFor({ state: 'hidden' });
    await chat('Hello, tell me a long story.');
  });

  it('starts over cleanly when the server ignores Range, and resumes after a lost connection', async () => {
    await openInPage();
    // Ignores Range: held mid-file, then the page reloads; Resume gets the whole file again.
    host.state.trickle = true;
    await download(`${models}/norange/other.gguf`);
    await expect.poll(async () => (await kept())['other.gguf'] ?? 0, POLL).toBeGreaterThan(0);
    await page.reload();
    host.state.trickle = false;
    await openInPage();
    await dialog().getByRole('button', { name: 'Resume' }).click();
    await expect
      .poll(() => dialog().getByText('other.gguf', { exact: true }).count(), POLL)
      .toBe(1);
    expect(await keptHash('other.gguf')).toBe(sha(TINY));

    // The connection is cut halfway: a sentence, the bytes kept, and Resume finishes it.
    await download(`${models}/cut/cut.gguf`);
    await expect
      .poll(alertText, POLL)
      .toMatch(
        /^The download of cut\.gguf stopped .*choose Resume to go on from where it stopped\.$/,
      );
    await dialog().getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => dialog().getByText('cut.gguf', { exact: true }).count(), POLL).toBe(1);
    expect(await keptHash('cut.gguf')).toBe(sha(TINY));

    // Cancel stops a download and drops what it kept.
    host.state.trickle = true;
    await download(`${models}/ok/dropped.gguf`);
    await expect.poll(async () => (await kept())['dropped.gguf'] ?? 0, POLL).toBeGreaterThan(0);
    await dialog().getByRole('button', { name: 'Cancel the download' }).click();
    host.state.trickle = false;
    await expect
      .poll(
        async () => Object.keys(await kept()).filter((k) => !/^(tiny|other|cut)\./.test(k)),
        POLL,
      )
      .toEqual([]);
    expect(Object.keys(await kept())).toEqual(expect.arrayContaining(['other.gguf', 'cut.gguf']));
    expect(await dialog().getByRole('button', { name: 'Resume' }).count()).toBe(0);
  });

  it('downloads every part of a split model given the first, and chats with it', async () => {
    await download(`${models}/split/tiny-00001-of-00003.gguf`);
    await expect
      .poll(() => dialog().getByText('tiny-00001-of-00003.gguf', { exact: true }).count(), POLL)
      .toBe(1);
    expect(
      await dialog()
        .getByText(/ in 3 parts, kept in this browser$/)
        .count(),
    ).toBe(1);
    for (const [i, part] of SPLIT_PARTS.entries()) {
      expect(await keptHash(`tiny-0000${i + 1}-of-00003.gguf`)).toBe(sha(part));
    }
    await allowLongReplies(dialog());
    await dialog().getByRole('button', { name: 'Save' }).click();
    await dialog().waitFor({ state: 'hidden' });
    await chat('Hello again.');
  });
});
