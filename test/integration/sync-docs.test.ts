// The pure parts of sync: what a server document must be before it is written here, the
// encryption round trip, and the errors in words.
import { describe, expect, it } from 'vitest';
import { newEncryption, openEncryption } from '../../src/sync/crypto';
import { bodyHash, bodyProblems, entryId, historyId } from '../../src/sync/docs';
import { classify } from '../../src/sync/errors';

const entry = (over: Record<string, unknown> = {}) => ({
  t: 'entry',
  u: 1,
  d: 'Laptop',
  path: 'a/b',
  content: { x: 1 },
  chunks: [],
  created: 1,
  modified: 2,
  version: 1,
  ...over,
});

describe('server documents are checked before they are written', () => {
  it('a good entry passes; its id must name its path', () => {
    expect(bodyProblems(entryId('a/b'), entry())).toEqual([]);
    expect(bodyProblems('entry:c/d', entry()).join()).toMatch(/does not name its path/);
  });

  it('bad paths, versions, dates, content and unknown kinds are refused with a reason', () => {
    expect(bodyProblems('entry:../x', entry({ path: '../x' })).length).toBeGreaterThan(0);
    expect(bodyProblems(entryId('a/b'), entry({ version: 0 })).join()).toMatch(/version/);
    expect(bodyProblems(entryId('a/b'), entry({ modified: 1e20 })).join()).toMatch(/modified/);
    expect(bodyProblems(entryId('a/b'), entry({ content: undefined })).join()).toMatch(/content/);
    expect(bodyProblems('whatever:1', { t: 'whatever' })).toEqual([
      'unknown document "whatever:1"',
    ]);
    expect(bodyProblems(entryId('a/b'), 'text')).toEqual(['the document is not an object']);
    expect(
      bodyProblems('msg:1', {
        t: 'msg',
        u: 1,
        d: 'x',
        conv: 'conv:1',
        role: 'root',
        text: 'hi',
        time: 1,
      }).join(),
    ).toMatch(/role/);
    expect(
      bodyProblems('setting:endpoint', {
        t: 'setting',
        u: 1,
        d: 'x',
        key: 'endpoint',
        value: {},
      }).join(),
    ).toMatch(/does not sync/);
  });

  it('a shared setting keeps only the chat settings; a model server URL never comes in', () => {
    const body = {
      t: 'setting',
      u: 1,
      d: 'x',
      key: 'app',
      value: { persona: 'Hi', endpoint: 'http://evil.example', apiKey: 'k' },
    };
    expect(bodyProblems('setting:app', body)).toEqual([]);
    expect(body.value).toEqual({ persona: 'Hi' });
  });

  it('a __proto__ key in content stays an ordinary key', () => {
    const body = entry({ content: JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') });
    expect(bodyProblems(entryId('a/b'), body)).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(body.content as object)).toContain('__proto__');
  });

  it('the change hash ignores the stamp; history ids depend on what the row records', () => {
    expect(bodyHash(entry({ u: 5, d: 'A' }) as never)).toBe(
      bodyHash(entry({ u: 9, d: 'B' }) as never),
    );
    expect(bodyHash(entry() as never)).not.toBe(bodyHash(entry({ content: 2 }) as never));
    const row = { path: 'a/b', version: 1, reason: 'update', entry: { modified: 2 } };
    expect(historyId(row)).toBe(historyId({ ...row }));
    expect(historyId(row)).not.toBe(historyId({ ...row, conflictFrom: 'Laptop' }));
  });
});

describe('encryption', () => {
  it('seals and opens; another passphrase does not open the database; ids are keyed', async () => {
    const { meta, key } = await newEncryption('kiwi', 2000);
    const sealed = await key.seal({ secret: 'rhubarb' });
    expect(sealed).not.toContain('rhubarb');
    expect(await key.open(sealed)).toEqual({ secret: 'rhubarb' });
    expect(await key.seal({ secret: 'rhubarb' })).not.toBe(sealed); // a fresh IV each time
    expect(await openEncryption('nope', meta)).toBeNull();
    const again = await openEncryption('kiwi', meta);
    expect(again).not.toBeNull();
    expect(await again!.open(sealed)).toEqual({ secret: 'rhubarb' });
    expect(await again!.docId('entry:a/b')).toBe(await key.docId('entry:a/b'));
    expect(await key.docId('entry:a/b')).not.toContain('a/b');
    const tampered = sealed.slice(0, -4) + (sealed.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    await expect(key.open(tampered)).rejects.toThrow();
  });
});

describe('errors in words', () => {
  it('names the cause and the fix', () => {
    expect(classify({ status: 401, name: 'unauthorized' }, '').code).toBe('WRONG_CREDENTIALS');
    expect(classify({ status: 403, name: 'forbidden' }, '').code).toBe('FORBIDDEN');
    expect(classify(new TypeError('Failed to fetch'), 'http://app').code).toBe('UNREACHABLE');
    const cors = classify(new TypeError('Failed to fetch'), 'http://app:4173', true);
    expect(cors.code).toBe('CORS');
    expect(cors.fix).toMatch(/enable_cors = true.*origins = http:\/\/app:4173/);
    const unsure = classify(new TypeError('Failed to fetch'), 'http://app:4173', 'unknown');
    expect(unsure.message).toMatch(/cannot be reached, or .*CORS/);
    expect(unsure.fix).toMatch(/CouchDB is running.*enable_cors = true/);
    expect(classify({ status: 500, reason: 'boom' }, '').code).toBe('SERVER_ERROR');
  });
});
