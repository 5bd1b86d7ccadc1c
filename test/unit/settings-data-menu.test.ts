import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../src/app/settings';
import { exportFileName, isoDay, looksLikeJson } from '../../src/ui/sm-data-menu';
import { validateSettings } from '../../src/ui/sm-settings';

const draft = (over: Record<string, string | boolean> = {}) => ({
  ...DEFAULT_SETTINGS,
  temperature: '0.7',
  maxOutputTokens: '512',
  contextSize: '0',
  recencyBias: '0.3',
  contextTokens: '1000',
  ...over,
});

describe('validateSettings', () => {
  it('turns the typed fields back into settings', () => {
    const r = validateSettings(draft({ endpoint: ' http://localhost:5001 ', temperature: '1.25' }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.settings).toEqual({
      ...DEFAULT_SETTINGS,
      endpoint: 'http://localhost:5001',
      temperature: 1.25,
    });
  });

  it('names every bad field and saves nothing', () => {
    const r = validateSettings(
      draft({
        endpoint: 'localhost:5001',
        temperature: '3',
        maxOutputTokens: '12.5',
        contextSize: '100',
        recencyBias: '',
        contextTokens: '5000',
      }),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(Object.keys(r.errors).sort()).toEqual(
      [
        'contextSize',
        'contextTokens',
        'endpoint',
        'maxOutputTokens',
        'recencyBias',
        'temperature',
      ].sort(),
    );
    expect(r.errors.endpoint).toMatch(/http:\/\/ or https:\/\//);
    expect(r.errors.contextSize).toMatch(/512/);
  });

  it('refuses endpoints that are not http(s)', () => {
    expect(validateSettings(draft({ endpoint: 'javascript:alert(1)' })).ok).toBe(false);
    expect(validateSettings(draft({ endpoint: 'file:///etc/passwd' })).ok).toBe(false);
    expect(validateSettings(draft({ endpoint: 'https://example.org/v1' })).ok).toBe(true);
  });
});

describe('data menu helpers', () => {
  it('names export files by local date, with the subtree made file-safe', () => {
    const day = new Date(2026, 10, 22, 23, 59);
    expect(isoDay(day)).toBe('2026-11-22');
    expect(exportFileName('md', day)).toBe('structured-memory-2026-11-22.md');
    expect(exportFileName('json', day)).toBe('structured-memory-2026-11-22.json');
    expect(exportFileName('md', day, 'Projects/Apollo Goals')).toBe(
      'structured-memory-Projects-Apollo-Goals-2026-11-22.md',
    );
    expect(exportFileName('md', day, '../../etc')).toBe('structured-memory-etc-2026-11-22.md');
    // Letters whole, accents and all scripts kept (decomposed, "Zürich" came out "Zu-rich").
    expect(exportFileName('md', day, 'Trips/Zu\u0308rich')).toBe(
      'structured-memory-Trips-Zürich-2026-11-22.md',
    );
    expect(exportFileName('md', day, 'データ/Ｎｏｔｅｓ')).toBe(
      'structured-memory-データ-Notes-2026-11-22.md',
    );
  });

  it('tells a JSON backup from Markdown by name, type, then content', () => {
    expect(looksLikeJson('backup.json', '', '# not really')).toBe(true);
    expect(looksLikeJson('x', 'application/json', '')).toBe(true);
    expect(looksLikeJson('notes.md', '', '{')).toBe(false);
    expect(looksLikeJson('notes', '', '  {"a":1}')).toBe(true);
    expect(looksLikeJson('notes', '', '# Heading')).toBe(false);
  });
});
