// Sync's words for what happened (docs/sync.md, "Errors", "Checks of what arrives"): whether
// anything tries again is said truly, and skipped documents are grouped by reason.
import { describe, expect, it } from 'vitest';
import { skipReasons } from '../../src/sync/engine';
import { checkServer } from '../../src/sync/check';
import { syncError, withRetryNote } from '../../src/sync/errors';

describe('sync status in words', () => {
  it('a failure that can pass says whether anything tries again; one of the settings does not', () => {
    const down = syncError('UNREACHABLE', 'The sync server cannot be reached.').info();
    expect(withRetryNote(down, false).fix).toMatch(/Nothing tries again by itself/);
    expect(withRetryNote(down, true).fix).toMatch(/Keep in sync tries again by itself/);
    const login = syncError('WRONG_CREDENTIALS', 'The server refused the login.').info();
    expect(withRetryNote(login, true)).toEqual(login);
  });

  it('skipped documents are grouped by reason, whatever id or value each quotes', () => {
    const skipped = new Map([
      ['entry:a', 'entry id "entry:a" does not name its path'],
      ['entry:b', 'entry id "entry:b" does not name its path'],
      ['entry:c', 'entry id "entry:c" does not name its path'],
      ['entry:d', 'version must be a whole number from 1 to 9007199254740991, got -1'],
      ['entry:e', 'version must be a whole number from 1 to 9007199254740991, got -2'],
      ['x1', 'it does not open with this passphrase'],
    ]);
    expect(skipReasons(skipped)).toEqual([
      { why: 'entry id "entry:a" does not name its path', count: 3, example: 'entry:a' },
      {
        why: 'version must be a whole number from 1 to 9007199254740991, got -1',
        count: 2,
        example: 'entry:d',
      },
      { why: 'it does not open with this passphrase', count: 1, example: 'x1' },
    ]);
  });

  it('Check server refuses an address that is not one, without a request', async () => {
    const fetch = () => Promise.reject(new Error('no request expected'));
    const target = { url: 'couch.local', database: 'memory', username: '', password: '' };
    const c = await checkServer(target, { fetch, origin: 'http://app' });
    expect(c.ok).toBe(false);
    expect(c.lines).toEqual([
      { step: 'address', ok: false, text: expect.stringMatching(/is not a web address/) },
    ]);
  });
});
