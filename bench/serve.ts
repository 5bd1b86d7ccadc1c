// A static file server for the browser benchmark: 127.0.0.1 only, a free port, cross-origin
// isolation headers (so ONNX threads and SharedArrayBuffer may be tried), and closed by the
// runner when it finishes (or after `maxLifeMs`, whatever happens to the runner).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.css': 'text/css; charset=utf-8',
};

export interface BenchServer {
  url: string;
  close(): Promise<void>;
}

export async function serveDir(root: string, maxLifeMs = 30 * 60_000): Promise<BenchServer> {
  const base = normalize(root + sep);
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://127.0.0.1').pathname);
    let file = normalize(join(base, path));
    const headers = {
      'Cache-Control': 'no-store',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
    };
    if (!file.startsWith(base)) {
      res.writeHead(403, headers).end();
      return;
    }
    stat(file)
      .then(async (info) => {
        if (info.isDirectory()) {
          file = join(file, 'index.html');
          info = await stat(file);
        }
        res.writeHead(200, {
          ...headers,
          'Content-Type': MIME[extname(file)] ?? 'application/octet-stream',
          'Content-Length': String(info.size),
        });
        createReadStream(file).pipe(res);
      })
      .catch(() => res.writeHead(404, headers).end('Not found'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const close = () =>
    new Promise<void>((resolve) => {
      clearTimeout(timer);
      server.closeAllConnections();
      server.close(() => resolve());
    });
  // Stops by itself even if the runner is stuck.
  const timer = setTimeout(() => void close(), maxLifeMs);
  timer.unref();
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close };
}
