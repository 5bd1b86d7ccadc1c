// Settings in plain words: what Test connection says, the fallback notice read apart and its
// dismissal remembered per device, and the range messages of the number fields.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SETTINGS,
  describeConnection,
  dismissNotice,
  isNoticeDismissed,
  parseFallbackNotice,
  toolModeKey,
  type NoticeStorage,
} from '../../src/app/settings';
import { koboldPasswordMissing } from '../../src/llm/connector';
import type { ServerInfo } from '../../src/llm/types';
import { endpointProblem, validateSettings } from '../../src/ui/sm-settings';

function memoryStorage(): NoticeStorage & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    getItem: (k) => data.get(k) ?? null,
    setItem: (k, v) => void data.set(k, v),
  };
}

const kobold: ServerInfo = {
  kind: 'koboldcpp',
  baseUrl: 'http://localhost:5001',
  model: 'Mistral-7B',
  contextSize: 8192,
  version: '1.102',
  tokenizer: true,
};

const FALLBACK =
  'Embedding model Xenova/all-MiniLM-L6-v2 could not be loaded (Failed to fetch (offline)); ' +
  'using the bundled offline model structured-memory/glove-100d-sif.';

describe('the fallback notice', () => {
  it('is read into the model, the reason and a key that stays while it says the same', () => {
    const n = parseFallbackNotice(FALLBACK);
    expect(n.requested).toBe('Xenova/all-MiniLM-L6-v2');
    expect(n.bundled).toBe('structured-memory/glove-100d-sif');
    expect(n.reason).toBe('Failed to fetch (offline)');
    expect(parseFallbackNotice(FALLBACK).key).toBe(n.key);
    expect(parseFallbackNotice(FALLBACK.replace('Failed to fetch', 'HTTP 404')).key).not.toBe(
      n.key,
    );
    expect(parseFallbackNotice(FALLBACK.replace('all-MiniLM-L6-v2', 'bge-small')).key).not.toBe(
      n.key,
    );
  });

  it('keeps a message of another form whole', () => {
    const n = parseFallbackNotice('Something else went wrong.');
    expect(n.requested).toBe('');
    expect(n.reason).toBe('Something else went wrong.');
  });

  it('stays dismissed on this device until what it says changes', () => {
    const storage = memoryStorage();
    const n = parseFallbackNotice(FALLBACK);
    expect(isNoticeDismissed(n.key, storage)).toBe(false);
    dismissNotice(n.key, storage);
    expect(isNoticeDismissed(n.key, storage)).toBe(true);
    expect(
      isNoticeDismissed(parseFallbackNotice(FALLBACK.replace('offline', 'x')).key, storage),
    ).toBe(false);
  });

  it('keeps the latest keys only, and survives bad or missing storage', () => {
    const storage = memoryStorage();
    for (let i = 0; i < 30; i++) dismissNotice(`k${i}`, storage);
    expect(isNoticeDismissed('k29', storage)).toBe(true);
    expect(isNoticeDismissed('k0', storage)).toBe(false);
    storage.data.set('sm-dismissed-notices', '{not json');
    expect(isNoticeDismissed('k29', storage)).toBe(false);
    dismissNotice('again', storage);
    expect(isNoticeDismissed('again', storage)).toBe(true);
    const full: NoticeStorage = {
      getItem: () => null,
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
    };
    expect(() => dismissNotice('x', full)).not.toThrow();
    expect(() => dismissNotice('x', undefined)).not.toThrow();
  });
});

describe('Test connection in words', () => {
  const line = (lines: { label: string; value: string }[], label: string) =>
    lines.find((l) => l.label === label)?.value;

  it('names the server, the model, the context size and the tool calls, one line each', () => {
    const lines = describeConnection(kobold, { toolMode: 'auto' });
    expect(lines.map((l) => l.label)).toEqual(['Server', 'Model', 'Context size', 'Tool calls']);
    expect(line(lines, 'Server')).toBe('KoboldCPP 1.102');
    expect(line(lines, 'Model')).toBe('Mistral-7B');
    expect(line(lines, 'Context size')).toBe('8,192 tokens (from the server)');
    expect(line(lines, 'Tool calls')).toMatch(/^native/);
  });

  it('says where the context size comes from', () => {
    const ollama: ServerInfo = { ...kobold, kind: 'ollama', version: '0.5.1', contextSize: 4096 };
    expect(line(describeConnection(ollama, { toolMode: 'auto' }), 'Context size')).toMatch(
      /assumed.*set Context size/,
    );
    expect(
      line(
        describeConnection(
          { ...kobold, contextSize: 16384 },
          {
            toolMode: 'auto',
            contextOverride: 16384,
          },
        ),
        'Context size',
      ),
    ).toBe('16,384 tokens (your setting)');
  });

  it('tells native from prompted tools: the setting, then what the server showed before', () => {
    const llama: ServerInfo = { ...kobold, kind: 'llamacpp', version: undefined };
    expect(line(describeConnection(llama, { toolMode: 'auto' }), 'Tool calls')).toMatch(
      /^native; switches to prompted/,
    );
    expect(
      line(describeConnection(llama, { toolMode: 'auto', remembered: 'prompted' }), 'Tool calls'),
    ).toMatch(/^prompted: this server and model refused/);
    expect(line(describeConnection(llama, { toolMode: 'prompted' }), 'Tool calls')).toMatch(
      /^prompted.*set in Settings/,
    );
    expect(line(describeConnection(llama, { toolMode: 'native' }), 'Tool calls')).toBe(
      'native (set in Settings)',
    );
    expect(line(describeConnection(llama, { toolMode: 'auto' }), 'Server')).toBe('llama.cpp');
  });

  it('says when the server gave no model name', () => {
    const openai: ServerInfo = { ...kobold, kind: 'openai', model: '', version: undefined };
    const lines = describeConnection(openai, { toolMode: 'auto' });
    expect(line(lines, 'Server')).toBe('OpenAI-compatible server');
    expect(line(lines, 'Model')).toBe('not reported by the server');
  });

  it('keys tool modes as the chat session does', () => {
    expect(toolModeKey(kobold)).toBe('koboldcpp|http://localhost:5001|Mistral-7B');
  });

  it('spots KoboldCPP hiding its model from a client without the password', () => {
    expect(koboldPasswordMissing({ ...kobold, model: 'protected-model' })).toBe(true);
    expect(koboldPasswordMissing(kobold)).toBe(false);
    expect(koboldPasswordMissing({ ...kobold, kind: 'openai', model: 'protected-model' })).toBe(
      false,
    );
  });
});

describe('the number fields', () => {
  const draft = (over: Record<string, string> = {}) => ({
    ...DEFAULT_SETTINGS,
    temperature: '0.7',
    maxOutputTokens: '512',
    contextSize: '0',
    recencyBias: '0.3',
    contextTokens: '1000',
    ...over,
  });

  it('say what to type instead, in words', () => {
    const r = validateSettings(
      draft({ recencyBias: '1.5', contextTokens: '-1', temperature: 'x' }),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.recencyBias).toBe('Use a number from 0 (best match only) to 1 (newest first).');
    expect(r.errors.contextTokens).toMatch(/^Use a whole number from 0 to 4000/);
    expect(r.errors.temperature).toMatch(/^Use a number from 0 to 2/);
  });

  it('take an endpoint only as an http(s) address', () => {
    expect(endpointProblem('http://localhost:5001')).toBeUndefined();
    expect(endpointProblem(' https://example.org/v1 ')).toBeUndefined();
    expect(endpointProblem('localhost:5001')).toMatch(/http:\/\/ or https:\/\//);
    expect(endpointProblem('')).toMatch(/full address/);
  });
});
