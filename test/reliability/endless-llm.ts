// A model server whose first generation never ends, in the wire format of llama.cpp's
// llama-server or of KoboldCPP (PROTOCOLS.md; test/fixtures/fake-llm copies their detection
// quirks in full, and its `hang` reply stops after 10 s, so it cannot stand in here). Later
// generations answer "Recovered." normally, so a case can check the chat goes on afterwards.
// Binds 127.0.0.1 on a free port; stops on close() or after a minute without a request.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Endless =
  /** A content token every few milliseconds, forever (llama.cpp SSE, or KoboldCPP native). */
  | 'tokens'
  /** Only SSE keep-alive comments, forever: no event ever carries data. */
  | 'keep-alive'
  /** Headers never come: the request is accepted and left hanging. */
  | 'silent'
  /** Content as fast as the socket takes it, 64 KB per event, forever. */
  | 'flood-text'
  /** One tool call whose arguments never end, 64 KB per event (as text on KoboldCPP's native stream). */
  | 'flood-arguments';

export const ENDLESS: readonly Endless[] = [
  'tokens',
  'keep-alive',
  'silent',
  'flood-text',
  'flood-arguments',
];

export interface EndlessServer {
  url: string;
  /** Events (tokens or comments) written by the endless generation so far. */
  sent(): number;
  /** Resolves once the endless generation has written `n` events (or has started, for silent). */
  reached(n: number): Promise<void>;
  /** genkeys KoboldCPP's abort endpoint was called with. */
  aborts: string[];
  close(): Promise<void>;
}

export interface EndlessOptions {
  dialect: 'llamacpp' | 'koboldcpp';
  kind: Endless;
  model?: string;
}

const CHUNK = 'x'.repeat(64 * 1024);

export async function startEndlessServer(options: EndlessOptions): Promise<EndlessServer> {
  const model = options.model ?? 'endless-model';
  const sockets = new Set<Socket>();
  const aborts: string[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let sent = 0;
  let generations = 0;
  let closing = false;

  const progress = (by = 1) => {
    sent += by;
    for (const w of waiters.splice(0)) {
      if (sent >= w.n) w.resolve();
      else waiters.push(w);
    }
  };

  const json = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
    });
    res.end(text);
  };

  /** Writes while the socket takes it; resolves when the socket drains (or is gone). */
  const write = (res: ServerResponse, text: string): Promise<boolean> =>
    new Promise((resolve) => {
      if (res.destroyed || res.writableEnded || closing) return resolve(false);
      if (res.write(text)) return setImmediate(() => resolve(true));
      const done = (ok: boolean) => () => {
        res.off('drain', onDrain);
        res.off('close', onClose);
        resolve(ok);
      };
      const onDrain = done(true);
      const onClose = done(false);
      res.once('drain', onDrain);
      res.once('close', onClose);
    });

  const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

  async function endless(res: ServerResponse, native: boolean) {
    if (options.kind === 'silent') {
      progress();
      return; // never answered; the socket closes when the client gives up or the server stops
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    const event = (data: unknown) =>
      native
        ? `event: message\ndata: ${JSON.stringify(data)}\n\n`
        : `data: ${JSON.stringify(data)}\n\n`;
    const delta = (d: unknown) => ({
      id: 'chatcmpl-endless',
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, delta: d, finish_reason: null }],
    });
    if (!native && !(await write(res, event(delta({ role: 'assistant', content: null }))))) return;
    if (options.kind === 'flood-arguments' && native) {
      // KoboldCPP's native stream has no tool calls: the model writes one as text.
      const start =
        '<tool_call>{"name": "saveMemory", "arguments": {"path": "Endless", "content": "';
      if (!(await write(res, event({ token: start, finish_reason: null })))) return;
    } else if (options.kind === 'flood-arguments') {
      const start = {
        tool_calls: [
          {
            index: 0,
            id: 'call_endless',
            type: 'function',
            function: { name: 'saveMemory', arguments: '{"path":"Endless","content":"' },
          },
        ],
      };
      if (!(await write(res, event(delta(start))))) return;
    }
    for (;;) {
      let text: string;
      switch (options.kind) {
        case 'tokens':
          await tick();
          text = native
            ? event({ token: ' and', finish_reason: null })
            : event(delta({ content: ' and' }));
          break;
        case 'keep-alive':
          await tick();
          text = ': keep-alive\n\n';
          break;
        case 'flood-text':
          text = native
            ? event({ token: CHUNK, finish_reason: null })
            : event(delta({ content: CHUNK }));
          break;
        case 'flood-arguments':
          text = native
            ? event({ token: CHUNK, finish_reason: null })
            : event(delta({ tool_calls: [{ index: 0, function: { arguments: CHUNK } }] }));
          break;
      }
      if (!(await write(res, text))) return;
      progress();
    }
  }

  async function answer(res: ServerResponse, native: boolean) {
    if (native) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `event: message\ndata: ${JSON.stringify({ token: 'Recovered.', finish_reason: null })}\n\n`,
      );
      res.end(`event: message\ndata: ${JSON.stringify({ token: '', finish_reason: 'stop' })}\n\n`);
      return;
    }
    const chunk = (d: unknown, finish: string | null) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-ok', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta: d, finish_reason: finish }] })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: null }, null));
    res.write(chunk({ content: 'Recovered.' }, null));
    res.write(chunk({}, 'stop'));
    res.end('data: [DONE]\n\n');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    idle.refresh();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    } catch {
      // detection GETs have no body
    }
    // Both servers answer CORS on everything (KoboldCPP and llama-server: `*`).
    res.setHeader('access-control-allow-origin', '*');
    if (req.method === 'OPTIONS') {
      res.writeHead(200, {
        'access-control-allow-methods': '*',
        'access-control-allow-headers': 'Authorization, Content-Type, *',
        'content-length': '0',
      });
      return void res.end();
    }
    const path = (req.url ?? '/').split('?')[0];
    const kobold = options.dialect === 'koboldcpp';
    if (kobold && path === '/api/extra/version')
      return json(res, 200, { result: 'KoboldCpp', version: '1.102' });
    if (kobold && path === '/api/extra/true_max_context_length')
      return json(res, 200, { value: 4096 });
    if (kobold && path === '/api/v1/model') return json(res, 200, { result: `koboldcpp/${model}` });
    if (kobold && path === '/api/extra/tokencount') {
      const n = String(body.prompt ?? '')
        .split(/\s+/)
        .filter(Boolean).length;
      return json(res, 200, { value: n, ids: [] });
    }
    if (kobold && path === '/api/extra/abort') {
      aborts.push(String(body.genkey));
      return json(res, 200, { success: 'true', done: 'true' });
    }
    if (!kobold && path === '/props')
      return json(res, 200, {
        default_generation_settings: { n_ctx: 4096 },
        model_path: `/models/${model}.gguf`,
      });
    if (!kobold && path === '/tokenize') {
      const n = String(body.content ?? '')
        .split(/\s+/)
        .filter(Boolean).length;
      return json(res, 200, { tokens: Array.from({ length: n }, (_, i) => i + 1) });
    }
    if (path === '/v1/models')
      return json(res, 200, {
        object: 'list',
        data: [{ id: kobold ? `koboldcpp/${model}` : model, object: 'model' }],
      });
    const native = path === '/api/extra/generate/stream';
    if (req.method === 'POST' && (native || path === '/v1/chat/completions')) {
      return generations++ === 0 ? endless(res, native) : answer(res, native);
    }
    if (kobold) {
      res.writeHead(404, { 'content-type': 'text/html' });
      return void res.end('<html><body>Not found</body></html>');
    }
    return json(res, 404, {
      error: { code: 404, message: 'File Not Found', type: 'not_found_error' },
    });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const close = () =>
    new Promise<void>((resolve) => {
      closing = true;
      clearTimeout(idle);
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  const idle = setTimeout(() => void close(), 60_000);
  idle.unref();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sent: () => sent,
    reached: (n) =>
      new Promise((resolve) => {
        if (sent >= n) resolve();
        else waiters.push({ n, resolve });
      }),
    aborts,
    close,
  };
}
