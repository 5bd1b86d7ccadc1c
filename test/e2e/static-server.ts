// A tiny static file server for end-to-end tests: serves a build folder on 127.0.0.1 and
// records every request, so a test can prove what the app fetched and from where.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { ISOLATION_HEADERS } from '../../src/isolation';

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

export interface ServedRequest {
  method: string;
  /** Path and query, as requested. */
  url: string;
  status: number;
  contentType?: string;
  /** Body bytes sent (Content-Length of a GET answered with a file). */
  bytes?: number;
}

export interface ServeOptions {
  /**
   * Extra headers on every response. Default: the cross-origin isolation headers that `vite
   * preview` sends (COOP/COEP), so the page is `crossOriginIsolated` from its first load, as
   * with `npm start`. `{}` is a plain static host (GitHub Pages), where the app's service worker
   * adds them and reloads the first visit once (docs/hosting.md).
   */
  headers?: Record<string, string>;
  /** URL path the folder is served under, e.g. `/some/sub/path/` (default `/`). */
  prefix?: string;
  /** The Cache-Control header (default `no-store`). */
  cacheControl?: string;
}

export interface StaticServer {
  /** The app's address: origin and prefix, e.g. `http://127.0.0.1:41234/` or `…/sub/path/`. */
  url: string;
  requests: ServedRequest[];
  close(): Promise<void>;
}

/** Serves `root` on 127.0.0.1 at a free port; `/` and folders serve their `index.html`. */
export async function serveStatic(root: string, options: ServeOptions = {}): Promise<StaticServer> {
  const requests: ServedRequest[] = [];
  const base = normalize(root + sep);
  const prefix = options.prefix ?? '/';
  if (!prefix.startsWith('/') || !prefix.endsWith('/')) {
    throw new Error(`prefix must start and end with "/": ${prefix}`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const record: ServedRequest = { method: req.method ?? 'GET', url: req.url ?? '/', status: 0 };
    requests.push(record);
    const reply = (status: number, headers: Record<string, string> = {}) => {
      record.status = status;
      record.contentType = headers['Content-Type'];
      res.writeHead(status, {
        'Cache-Control': options.cacheControl ?? 'no-store',
        'X-Content-Type-Options': 'nosniff',
        ...(options.headers ?? ISOLATION_HEADERS),
        ...headers,
      });
    };
    if (record.method !== 'GET' && record.method !== 'HEAD') {
      reply(405, { Allow: 'GET, HEAD' });
      res.end();
      return;
    }
    let pathname: string;
    try {
      pathname = decodeURIComponent(new URL(record.url, 'http://127.0.0.1').pathname);
    } catch {
      reply(400);
      res.end();
      return;
    }
    // The folder itself without its slash: redirect, as static hosts do (relative URLs need it).
    if (pathname === prefix.slice(0, -1) && prefix !== '/') {
      reply(301, { Location: prefix });
      res.end();
      return;
    }
    if (!pathname.startsWith(prefix)) {
      reply(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Not found');
      return;
    }
    let file = normalize(join(base, pathname.slice(prefix.length)));
    if (!file.startsWith(base)) {
      reply(403);
      res.end();
      return;
    }
    let info = await stat(file).catch(() => undefined);
    if (info?.isDirectory()) {
      file = join(file, 'index.html');
      info = await stat(file).catch(() => undefined);
    }
    if (!info?.isFile()) {
      reply(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Not found');
      return;
    }
    // Validators, as every static host sends them (GitHub Pages, Netlify, nginx): a browser
    // revalidating what it holds gets 304 and no body.
    const etag = `W/"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
    const validators = { ETag: etag, 'Last-Modified': info.mtime.toUTCString() };
    const known = req.headers['if-none-match'];
    if (known !== undefined && known.split(/\s*,\s*/).includes(etag)) {
      reply(304, validators);
      res.end();
      return;
    }
    reply(200, {
      'Content-Type': MIME[extname(file)] ?? 'application/octet-stream',
      'Content-Length': String(info.size),
      ...validators,
    });
    if (record.method === 'HEAD') {
      res.end();
      return;
    }
    record.bytes = info.size;
    createReadStream(file).pipe(res);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${prefix}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
