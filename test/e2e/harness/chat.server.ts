// The chat harness's model server, for the streaming end-to-end tests and `npm run
// bench:browser`: llama.cpp's `llama-server` on 127.0.0.1 (its detection endpoints, CORS and
// chunk shapes, PROTOCOLS.md) whose replies misbehave on purpose: one that ignores `max_tokens`
// and streams as fast as the socket takes it, one that never ends, a tool call whose arguments
// never end, a stream that stalls, and a request whose headers never come.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type RunawayReply =
  /** The whole text, one token per event, `tokensPerWrite` events per socket write; then [DONE]. */
  | { kind: 'text'; text: string; tokensPerWrite?: number }
  /** Tokens of `text` over and over, one every `everyMs`, never finished. */
  | { kind: 'endless'; text: string; everyMs: number }
  /** A saveMemory call whose arguments stream one piece every `everyMs`, never finished. */
  | { kind: 'endless-tool'; everyMs: number }
  /** Headers and the tokens of `text`, then silence with the connection open. */
  | { kind: 'stall-body'; text: string }
  /** The request is read and never answered (no headers). */
  | { kind: 'stall-headers' };

export interface RunawayServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Paths of the generation requests so far, and whether the client closed each one. */
  generations: { path: string; maxTokens: unknown; clientClosed: boolean }[];
  /** Characters of reply text and tool-call arguments written so far (all replies). */
  written(): number;
  close(): Promise<void>;
}

const MODEL = 'runaway-7b';
const CONTEXT = 8192;

/** Tokens as a model streams them: a word or a mark with its leading space. */
export function tokens(text: string): string[] {
  return text.match(/\s*[\p{L}\p{N}_]+|\s*[^\s\p{L}\p{N}_]|\s+/gu) ?? [];
}

const WORDS = (
  'the of and memory window tab sync goal plan model server stream token answer note path ' +
  'entry search vector chunk save query recall tree branch leaf value café naïve résumé 🙂 ' +
  'über 東京 fast slow long short first last next every other'
).split(' ');

/** A deterministic word stream (a small linear congruential generator). */
function wordsFrom(seed: number): () => string {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return WORDS[s % WORDS.length];
  };
}

/**
 * About `chars` characters of chat-like markdown (paragraphs with bold and code spans, lists,
 * headings, fenced code, literal markup that must stay text), the text a reader sees once it is
 * rendered, whitespace collapsed (the two agree word for word), and that of its last block.
 */
export function runawayText(
  chars: number,
  seed = 1,
): { markdown: string; visible: string; last: string } {
  const next = wordsFrom(seed);
  const md: string[] = [];
  const seen: string[] = [];
  let size = 0;
  let n = 0;
  let lastShown = '';
  const words = (count: number) => Array.from({ length: count }, next);
  while (size < chars) {
    n++;
    let block: string;
    let shown: string;
    if (n % 11 === 0) {
      const lines = [words(4).join(' '), `const n${n} = ${n};`, words(3).join('_')];
      block = '```ts\n' + lines.join('\n') + '\n```';
      shown = lines.join(' ');
    } else if (n % 7 === 0) {
      const items = [words(5), words(6), words(4)].map((w) => w.join(' '));
      block = items.map((i) => `- ${i}`).join('\n');
      shown = items.join(' ');
    } else if (n % 13 === 0) {
      const title = `Part ${n} ${words(2).join(' ')}`;
      block = `## ${title}`;
      shown = title;
    } else {
      const w = words(30 + (n % 50));
      const plain = w.join(' ');
      w[3] = `**${w[3]}**`;
      w[9] = `\`${w[9]}\``;
      block = `P${n}. ${w.join(' ')}${n % 5 === 0 ? ' <b>not bold</b>' : ''}.`;
      shown = `P${n}. ${plain}${n % 5 === 0 ? ' <b>not bold</b>' : ''}.`;
    }
    md.push(block);
    seen.push(shown);
    lastShown = shown;
    size += block.length + 2;
  }
  const collapse = (t: string) => t.replace(/\s+/g, ' ').trim();
  return {
    markdown: md.join('\n\n'),
    visible: collapse(seen.join(' ')),
    last: collapse(lastShown),
  };
}

/** Serves one reply at a time from `script` (called with the request's JSON body). */
export async function startRunawayServer(
  script: (body: Record<string, unknown>) => RunawayReply,
): Promise<RunawayServer> {
  const generations: RunawayServer['generations'] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let written = 0;

  const json = (res: ServerResponse, value: unknown) => {
    const body = JSON.stringify(value);
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
    });
    res.end(body);
  };

  async function stream(res: ServerResponse, reply: RunawayReply, gone: () => boolean) {
    if (reply.kind === 'stall-headers') return;
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    res.flushHeaders();
    const id = `chatcmpl-${Math.random().toString(36).slice(2)}`;
    const created = Math.floor(Date.now() / 1000);
    // llama.cpp dumps with nlohmann::json: keys sorted.
    const event = (delta: Record<string, unknown>, finish: string | null) =>
      `data: ${JSON.stringify({
        choices: [{ delta, finish_reason: finish, index: 0 }],
        created,
        id,
        model: MODEL,
        object: 'chat.completion.chunk',
        system_fingerprint: 'b6000-runaway',
      })}\n\n`;
    const write = async (text: string) => {
      if (gone()) return false;
      if (!res.write(text)) await new Promise((r) => res.once('drain', r));
      return !gone();
    };
    const wait = (ms: number) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          timers.delete(t);
          resolve();
        }, ms);
        timers.add(t);
      });
    await write(event({ content: null, role: 'assistant' }, null));
    switch (reply.kind) {
      case 'text': {
        const all = tokens(reply.text);
        const per = reply.tokensPerWrite ?? 16;
        for (let i = 0; i < all.length; i += per) {
          const batch = all.slice(i, i + per);
          if (!(await write(batch.map((t) => event({ content: t }, null)).join('')))) return;
          for (const t of batch) written += t.length;
          // Let the socket go out in pieces, as a generating server's does.
          if ((i / per) % 8 === 7) await new Promise((r) => setImmediate(r));
        }
        await write(event({}, 'stop'));
        await write('data: [DONE]\n\n');
        res.end();
        return;
      }
      case 'stall-body': {
        for (const t of tokens(reply.text)) {
          if (!(await write(event({ content: t }, null)))) return;
          written += t.length;
        }
        return; // and never another byte
      }
      case 'endless': {
        const all = tokens(reply.text);
        for (let i = 0; ; i++) {
          const t = all[i % all.length];
          if (!(await write(event({ content: t }, null)))) return;
          written += t.length;
          await wait(reply.everyMs);
        }
      }
      case 'endless-tool': {
        const call = { function: { arguments: '', name: 'saveMemory' }, id: 'call_1', index: 0 };
        if (!(await write(event({ tool_calls: [{ ...call, type: 'function' }] }, null)))) return;
        const pieces = ['{"path": "Runaway/Note", ', '"content": "', 'and more '];
        for (let i = 0; ; i++) {
          const piece = pieces[Math.min(i, 2)];
          const delta = { tool_calls: [{ function: { arguments: piece }, index: 0 }] };
          if (!(await write(event(delta, null)))) return;
          written += piece.length;
          await wait(reply.everyMs);
        }
      }
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '/').split('?')[0];
    // llama-server sends this on every response, and answers every preflight.
    res.setHeader('access-control-allow-origin', '*');
    if (req.method === 'OPTIONS') {
      res.writeHead(200, {
        'access-control-allow-credentials': 'true',
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'Authorization, Content-Type, *',
        'content-type': 'text/html',
        'content-length': '0',
      });
      res.end();
      return;
    }
    if (req.method === 'GET' && path === '/props') {
      return json(res, {
        default_generation_settings: { n_ctx: CONTEXT, params: { n_predict: -1 } },
        model_path: `/models/${MODEL}.gguf`,
        total_slots: 1,
      });
    }
    if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      return json(res, { data: [{ id: MODEL, object: 'model', owned_by: 'llamacpp' }] });
    }
    if (req.method === 'GET' && path === '/health') return json(res, { status: 'ok' });
    if (req.method === 'POST' && path === '/tokenize') {
      const body = JSON.parse(raw || '{}') as { content?: unknown };
      const text = typeof body.content === 'string' ? body.content : '';
      return json(res, { tokens: tokens(text).map((_, i) => 100 + i) });
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      const body = JSON.parse(raw || '{}') as Record<string, unknown>;
      const record = { path, maxTokens: body.max_tokens, clientClosed: false };
      generations.push(record);
      let closed = false;
      res.on('close', () => {
        closed = true;
        if (!res.writableFinished) record.clientClosed = true;
      });
      await stream(res, script(body), () => closed || res.destroyed);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ error: { code: 404, message: 'File Not Found', type: 'not_found_error' } }),
    );
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on('connection', (socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    generations,
    written: () => written,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.close(() => resolve());
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
      }),
  };
}
