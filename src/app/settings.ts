// Everything the user sets in the Settings dialog, with defaults. Persisted in the memory
// database (settings table, key 'app'). The endpoint is only ever set here, never from a URL.
import { DEFAULT_CHAT_SETTINGS, type ChatSettings } from '../chat/chat-session';
import { DEFAULT_ENDPOINT } from '../llm/connector';

export interface AppSettings extends ChatSettings {
  endpoint: string;
  apiKey: string;
  /** Context size override in tokens; 0 = what the server reports. */
  contextSize: number;
  /** `default` = the hub model (falls back to the bundled one offline); `bundled` = offline model. */
  embeddingModel: 'default' | 'bundled';
}

export const DEFAULT_SETTINGS: AppSettings = {
  ...DEFAULT_CHAT_SETTINGS,
  endpoint: DEFAULT_ENDPOINT,
  apiKey: '',
  contextSize: 0,
  embeddingModel: 'default',
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
  if (!['default', 'bundled'].includes(out.embeddingModel)) out.embeddingModel = 'default';
  return out;
}
