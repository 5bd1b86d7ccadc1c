// `npm run fake-llm -- --kind koboldcpp --port 5001`: one fake LLM server on 127.0.0.1 with a
// small demo "model" ("remember …" saves, a question looks memory up), for trying the app by hand.
// It stops by itself after 30 minutes without a request.
import { startFakeServer, type FakeKind } from '../test/fixtures/fake-llm';
import { demoReply } from '../test/fixtures/fake-llm/demo';

const KINDS: readonly FakeKind[] = ['koboldcpp', 'llamacpp', 'ollama', 'plain'];
const DEFAULT_PORTS: Record<FakeKind, number> = {
  koboldcpp: 5001,
  llamacpp: 8080,
  ollama: 11434,
  plain: 1234,
};
const IDLE_MS = 30 * 60 * 1000;

const USAGE = `Usage: npm run fake-llm -- [options]

  --kind <k>          koboldcpp (default) | llamacpp | ollama | plain
  --port <n>          port on 127.0.0.1 (default: 5001, 8080, 11434 or 1234 by kind; 0 = any)
  --model <name>      model name reported (default fake-model)
  --context <n>       context size reported (default 4096)
  --password <pw>     require Authorization: Bearer <pw>
  --token-delay <ms>  delay between streamed tokens (default 40)
  --no-tools          llama.cpp: behave as if started without --jinja;
                      ollama: the model does not support tools
  --no-schema         ollama: refuse a JSON schema in format (as before 0.5)
  --schema            plain: take response_format's JSON schema (as LM Studio);
                      without it, plain refuses response_format (the keeper falls back)
  --quiet             do not log requests
`;

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function parseArgs(argv: string[]): Map<string, string | true> {
  const out = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) fail(`Unexpected argument: ${a}`);
    const [key, inline] = a.slice(2).split('=', 2);
    if (inline !== undefined) out.set(key, inline);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) out.set(key, argv[++i]);
    else out.set(key, true);
  }
  return out;
}

function intArg(args: Map<string, string | true>, key: string): number | undefined {
  const v = args.get(key);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v === true || !Number.isInteger(n) || n < 0) fail(`--${key} needs a whole number`);
  return n;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.has('help') || args.has('h')) {
    console.log(USAGE);
    return;
  }
  const known = [
    'kind',
    'port',
    'model',
    'context',
    'password',
    'token-delay',
    'no-tools',
    'no-schema',
    'schema',
    'quiet',
  ];
  for (const k of args.keys()) if (!known.includes(k)) fail(`Unknown option --${k}`);

  const kindArg = args.get('kind') ?? 'koboldcpp';
  if (kindArg === true || !KINDS.includes(kindArg as FakeKind)) {
    fail(`--kind must be one of ${KINDS.join(', ')}`);
  }
  const kind = kindArg as FakeKind;
  const model = typeof args.get('model') === 'string' ? (args.get('model') as string) : undefined;
  const password =
    typeof args.get('password') === 'string' ? (args.get('password') as string) : undefined;
  const noTools = args.has('no-tools');
  const quiet = args.has('quiet');

  const server = await startFakeServer(kind, {
    port: intArg(args, 'port') ?? DEFAULT_PORTS[kind],
    model,
    contextSize: intArg(args, 'context'),
    password,
    tokenDelayMs: intArg(args, 'token-delay') ?? 40,
    jinja: !(noTools && kind === 'llamacpp'),
    noToolsModels: noTools && kind === 'ollama' ? [model ?? 'fake-model'] : [],
    formatString: args.has('no-schema') && kind === 'ollama',
    responseFormat: args.has('schema') ? 'accept' : 'refuse',
    defaultReply: demoReply,
    idleTimeoutMs: IDLE_MS,
    onRequest: (r) => {
      if (!quiet) console.log(`${new Date(r.time).toISOString()} ${r.method} ${r.path}`);
    },
    onClose: (reason) => {
      if (reason === 'idle') console.log('No request for 30 minutes: stopping.');
    },
  });

  console.log(`Fake ${kind} server listening on ${server.url}`);
  console.log(`Set the app's server URL to ${server.url}`);
  console.log('Try: "Remember that my cat is called Tom." then "What is my cat called?"');
  console.log(
    'A memory keeper request turns "My sister Ana is moving to Lisbon in May." into Family/Ana.',
  );
  console.log('Stops after 30 minutes without a request; Ctrl+C to stop now.');

  const stop = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((e: unknown) => {
  const err = e as NodeJS.ErrnoException;
  if (err?.code === 'EADDRINUSE') fail('That port is already in use: pick another with --port.');
  console.error(e);
  process.exit(1);
});
