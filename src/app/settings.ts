// Everything the user sets in the Settings dialog, with defaults. Persisted in the memory
// database (settings table, key 'app'). The endpoint is only ever set here, never from a URL.
// Also what Test connection reports, in words, and the notices dismissed on this device.
import { DEFAULT_CHAT_SETTINGS, type ChatSettings } from '../chat/chat-session';
import { DEFAULT_ENDPOINT, SERVER_LABELS, type ToolProbe } from '../llm/connector';
import type { ServerInfo, ServerKind, ToolMode } from '../llm/types';
import { KEEP_CHOICES, type AutoBackup } from './backup-plan';

export interface AppSettings extends ChatSettings {
  /** Where the model runs: a server at `endpoint`, or in this page (docs/in-page-model.md). */
  modelSource: 'server' | 'inpage';
  /** The GGUF kept in this browser for the in-page model (its file name; '' for none). */
  inPageModel: string;
  endpoint: string;
  apiKey: string;
  /** Context size override in tokens; 0 = what the server reports. */
  contextSize: number;
  /** `default` = the hub model (falls back to the bundled one offline); `bundled` = offline model. */
  embeddingModel: 'default' | 'bundled';
  /**
   * The memory keeper: after an exchange in which the model saved nothing, one extra generation
   * asks the same server what to remember (docs/chat.md, "Memory keeper").
   */
  memoryKeeper: boolean;
  /**
   * Backups (docs/settings.md, "Backups"), on this device only: the reminder when memory changed
   * and nothing was exported or synced for a week, the automatic backup and how many of its
   * files the picked folder keeps.
   */
  backupReminder: boolean;
  autoBackup: AutoBackup;
  backupKeep: number;
}

export const DEFAULT_SETTINGS: AppSettings = {
  ...DEFAULT_CHAT_SETTINGS,
  modelSource: 'server',
  inPageModel: '',
  endpoint: DEFAULT_ENDPOINT,
  apiKey: '',
  contextSize: 0,
  embeddingModel: 'default',
  memoryKeeper: true,
  backupReminder: true,
  autoBackup: 'off',
  backupKeep: 7,
};

export const SETTINGS_KEY = 'app';

/** Stored settings merged over the defaults; anything malformed falls back to the default. */
export function normaliseSettings(stored: unknown): AppSettings {
  const out: AppSettings = { ...DEFAULT_SETTINGS };
  if (!stored || typeof stored !== 'object') return out;
  const s = stored as Record<string, unknown>;
  for (const key of Object.keys(DEFAULT_SETTINGS) as (keyof AppSettings)[]) {
    const value = s[key];
    if (typeof value === typeof DEFAULT_SETTINGS[key])
      (out as unknown as Record<string, unknown>)[key] = value;
  }
  if (!['auto', 'native', 'prompted'].includes(out.toolMode)) out.toolMode = 'auto';
  if (!['server', 'inpage'].includes(out.modelSource)) out.modelSource = 'server';
  if (!['default', 'bundled'].includes(out.embeddingModel)) out.embeddingModel = 'default';
  if (!['off', 'daily', 'weekly'].includes(out.autoBackup)) out.autoBackup = 'off';
  if (!(KEEP_CHOICES as readonly number[]).includes(out.backupKeep)) out.backupKeep = 7;
  return out;
}

/** The key under which a tool mode is remembered per server and model (as the chat session keeps it). */
export function toolModeKey(info: Pick<ServerInfo, 'kind' | 'baseUrl' | 'model'>): string {
  return `${info.kind}|${info.baseUrl}|${info.model}`;
}

/** One line of what Test connection found: a label and its value (plain text, never markup). */
export interface ConnectionLine {
  label: string;
  value: string;
}

/** What Test connection found: a line per fact, or the sentence that says what is wrong. */
export type ConnectionReport =
  { ok: true; lines: ConnectionLine[] } | { ok: false; message: string };

/** A server to test, as typed in the Settings dialog (not saved yet). */
export interface ConnectionTest {
  endpoint: string;
  apiKey: string;
  /** The context size override as typed (0: the server's). */
  contextSize: number;
  toolMode: ToolMode;
  /** Aborted when the dialog closes or a new test starts. */
  signal: AbortSignal;
}

/** Servers whose detection reads the context size from the server itself. */
const REPORTS_CONTEXT: ReadonlySet<ServerKind> = new Set(['koboldcpp', 'llamacpp']);

/**
 * What Test connection shows, one line each: the server, the model, the context size and how
 * tool calls will go. `toolMode` is the setting; `remembered` what an earlier chat learned
 * about this server and model (`prompted` once it refused native tools); `probe` what the server
 * said just now when asked with tools (llama.cpp and Ollama), or why it could not be asked.
 */
export function describeConnection(
  info: ServerInfo,
  options: {
    toolMode: ToolMode;
    remembered?: ToolMode;
    contextOverride?: number;
    probe?: ToolProbe | { failed: string };
  },
): ConnectionLine[] {
  const server = SERVER_LABELS[info.kind] + (info.version ? ` ${info.version}` : '');
  const tokens = `${info.contextSize.toLocaleString('en-US')} tokens`;
  let context: string;
  if (options.contextOverride && options.contextOverride > 0) context = `${tokens} (your setting)`;
  else if (REPORTS_CONTEXT.has(info.kind)) context = `${tokens} (from the server)`;
  else
    context = `${tokens} (assumed: this server does not say; set Context size if yours is larger)`;
  const probe = options.probe;
  let tools: string;
  if (probe && 'native' in probe && !probe.native) {
    tools =
      options.toolMode === 'native'
        ? `native (set in Settings), but the server refuses them: ${probe.message} Choose Auto or Prompted tools in Tool mode.`
        : `prompted: ${probe.message}`;
  } else if (options.toolMode === 'native')
    tools =
      probe && 'native' in probe
        ? 'native (set in Settings; the server takes them)'
        : 'native (set in Settings)';
  else if (options.toolMode === 'prompted')
    tools = 'prompted: the tools are described in the prompt (set in Settings)';
  else if (options.remembered === 'prompted')
    tools = 'prompted: this server and model refused native tool calls before';
  else if (info.kind === 'koboldcpp')
    tools = 'native (KoboldCPP emulates them, so a reply that uses memory starts later)';
  else if (probe && 'native' in probe)
    tools = 'native: the server takes them for this model (asked just now)';
  else tools = 'native; switches to prompted by itself if the server refuses them';
  if (probe && 'failed' in probe) tools += ` (could not ask the server: ${probe.failed})`;
  return [
    { label: 'Server', value: server },
    { label: 'Model', value: info.model || 'not reported by the server' },
    { label: 'Context size', value: context },
    { label: 'Tool calls', value: tools },
  ];
}

/** The notices dismissed on this device (localStorage: per browser profile, not synced). */
const DISMISSED_KEY = 'sm-dismissed-notices';
const MAX_DISMISSED = 20;

/** What `localStorage` offers that the dismissal memory needs (injected in tests). */
export type NoticeStorage = Pick<Storage, 'getItem' | 'setItem'>;

function defaultStorage(): NoticeStorage | undefined {
  try {
    return globalThis.localStorage ?? undefined;
  } catch {
    return undefined; // storage disabled for this site
  }
}

function readDismissed(storage: NoticeStorage | undefined): string[] {
  try {
    const parsed: unknown = JSON.parse(storage?.getItem(DISMISSED_KEY) ?? '[]');
    return Array.isArray(parsed) ? parsed.filter((k): k is string => typeof k === 'string') : [];
  } catch {
    return [];
  }
}

/** Whether the notice with this key was dismissed on this device. */
export function isNoticeDismissed(key: string, storage = defaultStorage()): boolean {
  return readDismissed(storage).includes(key);
}

/** Remembers that the notice with this key was dismissed (the latest few keys are kept). */
export function dismissNotice(key: string, storage = defaultStorage()): void {
  const keys = [key, ...readDismissed(storage).filter((k) => k !== key)].slice(0, MAX_DISMISSED);
  try {
    storage?.setItem(DISMISSED_KEY, JSON.stringify(keys));
  } catch {
    // Full or disabled storage: the notice is dismissed for this page load only.
  }
}

/** The embedding-model fallback notice, read apart so that it can be said in one short line. */
export interface FallbackNotice {
  /** The model that could not be loaded ('' when the message has another form). */
  requested: string;
  /** The bundled model used instead ('' when unknown). */
  bundled: string;
  /** Why the requested model could not be loaded (the whole message when unknown). */
  reason: string;
  /** Stays the same while the notice says the same thing: what a dismissal is remembered by. */
  key: string;
}

const FALLBACK_MESSAGE =
  /^Embedding model (\S+) could not be loaded \((.*)\); using the bundled offline model (\S+?)\.?$/s;

/** Reads the embedder's fallback message (src/embeddings/embedder.ts) into its parts. */
export function parseFallbackNotice(message: string): FallbackNotice {
  const m = FALLBACK_MESSAGE.exec(message.trim());
  const requested = m?.[1] ?? '';
  const bundled = m?.[3] ?? '';
  const reason = (m?.[2] ?? message).trim();
  return { requested, bundled, reason, key: `fallback|${requested}|${bundled}|${reason}` };
}
