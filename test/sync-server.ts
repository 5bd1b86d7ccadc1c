// A server of the CouchDB replication protocol for the sync tests: express-pouchdb over an
// in-memory PouchDB, on 127.0.0.1 at a port the OS picks. Optional basic auth and CORS (on by
// default), and stop/start on the same port with the data kept (a server that goes away).
import type { AddressInfo } from 'node:net';
import type { Server, Socket } from 'node:net';
import express from 'express';
import expressPouchDB from 'express-pouchdb';
import PouchCore from 'pouchdb-core';
import PouchHttp from 'pouchdb-adapter-http';
import PouchMemory from 'pouchdb-adapter-memory';
import PouchMapReduce from 'pouchdb-mapreduce';
import PouchReplication from 'pouchdb-replication';
import type { PouchDatabase, PouchDoc, PouchFactory } from '../src/sync/pouch';

type PouchClass = new (name: string, options?: object) => PouchDatabase;

let pouchClass: PouchClass | undefined;

/** PouchDB for Node: memory adapter for local databases, http for remote ones, replication. */
export function nodePouch(): PouchClass {
  interface Pluggable {
    plugin(p: unknown): Pluggable;
  }
  pouchClass ??= (PouchCore as Pluggable)
    .plugin(PouchMemory)
    .plugin(PouchHttp)
    .plugin(PouchReplication)
    .plugin(PouchMapReduce) as unknown as PouchClass;
  return pouchClass;
}

/** A factory for the sync engine: local names in memory, URLs over http. */
export const nodePouchFactory: PouchFactory = (name, options) => {
  const Pouch = nodePouch();
  return /^https?:/.test(name)
    ? new Pouch(name, options)
    : new Pouch(name, { ...options, adapter: 'memory' });
};

export interface TestSyncServer {
  /** e.g. http://127.0.0.1:40123 */
  url: string;
  port: number;
  /** The stored documents of a database, as the server keeps them (deleted ones included). */
  storedDocs(db: string): Promise<Record<string, unknown>[]>;
  /** A database on the server, for direct reads and writes. */
  database(db: string): PouchDatabase;
  /** Closes the port and every open connection; the data stays. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** Requests seen, by method and path (for the tests that count them). */
  requests: number;
  close(): Promise<void>;
}

export interface ServerOptions {
  /** Require this basic-auth user. */
  auth?: { username: string; password: string };
  /** Send CORS headers (default true). */
  cors?: boolean;
  /** Called before each request; may delay or fail it. */
  onRequest?: (req: express.Request) => void | Promise<void>;
}

let serial = 0;

export async function startSyncServer(options: ServerOptions = {}): Promise<TestSyncServer> {
  const prefix = `srv${process.pid}-${++serial}-`;
  const Pouch = nodePouch();
  const ServerPouch = (Pouch as unknown as { defaults(o: object): PouchClass }).defaults({
    adapter: 'memory',
    prefix,
  });
  const app = express();
  const state = { requests: 0 };
  app.use(async (req: express.Request, res: express.Response, next: () => void) => {
    state.requests++;
    if (options.cors !== false) {
      const origin = req.headers.origin;
      if (origin) {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Access-Control-Allow-Credentials', 'true');
        res.setHeader('Access-Control-Allow-Methods', 'GET, PUT, POST, HEAD, DELETE');
        res.setHeader(
          'Access-Control-Allow-Headers',
          'accept, authorization, content-type, origin, referer',
        );
        res.setHeader('Access-Control-Expose-Headers', 'content-type, cache-control, etag');
      }
      if (req.method === 'OPTIONS') {
        res.status(204).end();
        return;
      }
    }
    if (options.auth) {
      const want =
        'Basic ' +
        Buffer.from(`${options.auth.username}:${options.auth.password}`).toString('base64');
      if (req.headers.authorization !== want) {
        res.status(401).json({ error: 'unauthorized', reason: 'Name or password is incorrect.' });
        return;
      }
    }
    try {
      await options.onRequest?.(req);
    } catch {
      req.socket.destroy();
      return;
    }
    next();
  });
  app.use(
    '/',
    expressPouchDB(ServerPouch, {
      mode: 'minimumForPouchDB',
      inMemoryConfig: true,
      logPath: false,
    }),
  );

  let server: Server | undefined;
  const sockets = new Set<Socket>();
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = app.listen(port, '127.0.0.1', () => {
        port = (s.address() as AddressInfo).port;
        resolve();
      });
      s.on('error', reject);
      s.on('connection', (socket: Socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      server = s;
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!server) return resolve();
      const s = server;
      server = undefined;
      s.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  await listen();
  const dbs = new Map<string, PouchDatabase>();
  const database = (db: string) => {
    let d = dbs.get(db);
    if (!d) {
      d = new ServerPouch(db);
      dbs.set(db, d);
    }
    return d;
  };

  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    get requests() {
      return state.requests;
    },
    set requests(n: number) {
      state.requests = n;
    },
    database,
    async storedDocs(db) {
      const d = database(db);
      const feed = await d.changes({ since: 0, style: 'all_docs', return_docs: true });
      const out: Record<string, unknown>[] = [];
      // Every revision still held, not only the leaves.
      for (const ch of feed.results) {
        const leaves = (await d.get(ch.id, { open_revs: 'all', revs: true } as {
          open_revs: 'all';
        })) as { ok?: PouchDoc }[];
        for (const leaf of leaves) {
          if (!leaf.ok) continue;
          out.push(leaf.ok);
          const r = leaf.ok._revisions;
          for (const [i, id] of (r?.ids ?? []).entries()) {
            if (i === 0) continue;
            const old = await d.get(ch.id, { rev: `${r!.start - i}-${id}` }).catch(() => null);
            if (old) out.push(old);
          }
        }
      }
      return out;
    },
    stop,
    start: listen,
    async close() {
      await stop();
      for (const d of dbs.values()) await d.destroy().catch(() => undefined);
    },
  };
}
