// Declarations for the untyped packages of the sync tests' server (test/sync-server.ts).
declare module 'express' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  import type { Server } from 'node:net';
  namespace express {
    interface Request extends IncomingMessage {
      method: string;
      path: string;
    }
    interface Response extends ServerResponse {
      status(code: number): Response;
      json(body: unknown): Response;
    }
    type Handler = (req: Request, res: Response, next: () => void) => void | Promise<void>;
    interface App {
      use(handler: Handler | unknown): App;
      use(path: string, handler: Handler | unknown): App;
      listen(port: number, host: string, cb: () => void): Server;
    }
  }
  function express(): express.App;
  export default express;
}
declare module 'express-pouchdb' {
  export default function expressPouchDB(pouch: unknown, options?: object): unknown;
}
declare module 'pouchdb-core' {
  const PouchDB: unknown;
  export default PouchDB;
}
declare module 'pouchdb-adapter-http' {
  const plugin: unknown;
  export default plugin;
}
declare module 'pouchdb-adapter-memory' {
  const plugin: unknown;
  export default plugin;
}
declare module 'pouchdb-mapreduce' {
  const plugin: unknown;
  export default plugin;
}
declare module 'pouchdb-replication' {
  const plugin: unknown;
  export default plugin;
}
