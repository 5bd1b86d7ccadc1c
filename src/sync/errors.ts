// Sync failures in words (docs/sync.md, "Errors"): what happened and the sentence that fixes it.

export type SyncErrorCode =
  | 'NOT_CONFIGURED'
  | 'INVALID_URL'
  | 'UNREACHABLE'
  | 'CORS'
  | 'WRONG_CREDENTIALS'
  | 'FORBIDDEN'
  | 'WRONG_PASSPHRASE'
  | 'NEEDS_PASSPHRASE'
  | 'NOT_ENCRYPTED'
  | 'SERVER_ERROR'
  | 'STORAGE_FULL'
  | 'INTERNAL';

export interface SyncErrorInfo {
  code: SyncErrorCode;
  message: string;
  fix: string;
}

/**
 * The CouchDB settings that let this page talk to the server from another origin, in one
 * sentence (Settings → Sync shows the full local.ini lines in its setup steps; CouchDB's default
 * CORS methods and headers are the ones the sync needs).
 */
export function corsFix(origin: string): string {
  const o = origin || 'this page’s origin';
  return (
    `Allow this app on the server: turn on CORS for ${o} with logins allowed (Fauxton → ` +
    `Settings → CORS, or in its settings [chttpd] enable_cors = true and [cors] origins = ${o}, ` +
    'credentials = true).'
  );
}

/** Failures that go away by themselves (the server comes back): trying again can fix them. */
export const PASSING: readonly SyncErrorCode[] = [
  'UNREACHABLE',
  'CORS',
  'SERVER_ERROR',
  'INTERNAL',
];

/**
 * What happens next after a failure that trying again can fix: with Keep in sync on the engine
 * tries again by itself; without it nothing does until the person presses Sync now.
 */
export function retryNote(live: boolean): string {
  return live
    ? 'Keep in sync tries again by itself, waiting longer each time.'
    : 'Nothing tries again by itself: press Sync now to try again (or turn on Keep in sync, which keeps trying).';
}

/** `info` with the sentence that says whether anything tries again (only where that helps). */
export function withRetryNote(info: SyncErrorInfo, live: boolean): SyncErrorInfo {
  if (!PASSING.includes(info.code)) return info;
  return { ...info, fix: `${info.fix} ${retryNote(live)}`.trim() };
}

export class SyncError extends Error {
  constructor(
    readonly code: SyncErrorCode,
    message: string,
    readonly fix: string,
  ) {
    super(message);
    this.name = 'SyncError';
  }

  info(): SyncErrorInfo {
    return { code: this.code, message: this.message, fix: this.fix };
  }
}

const FIXES: Record<SyncErrorCode, string> = {
  NOT_CONFIGURED: 'Enter the server URL and a database name in Settings → Sync.',
  INVALID_URL: 'Enter the address as http://host:5984 or https://host (no database name in it).',
  UNREACHABLE:
    'Check that CouchDB is running and the URL is right (open it in a new tab: it answers with ' +
    '{"couchdb":"Welcome"}).',
  CORS: '',
  WRONG_CREDENTIALS:
    'Check the username and password: they are a CouchDB user (or the admin made with ' +
    'COUCHDB_USER and COUCHDB_PASSWORD).',
  FORBIDDEN:
    'This user may not read or write that database: add the user as a member of the database ' +
    '(Fauxton → the database → Permissions), or pick another database.',
  WRONG_PASSPHRASE:
    'Enter the passphrase used on the first device that synced this database. Nothing was written here.',
  NEEDS_PASSPHRASE:
    'This database is encrypted: turn on encryption and enter its passphrase. Nothing was written here.',
  NOT_ENCRYPTED:
    'This database already holds unencrypted memory. To encrypt, use a new database name; ' +
    'to keep this one, turn encryption off.',
  SERVER_ERROR: 'The server had a problem: look at the CouchDB log if it stays.',
  STORAGE_FULL: 'Browser storage is full: delete old memories or allow more storage.',
  INTERNAL: 'This is a bug in the app; please report it if it stays.',
};

export function syncError(code: SyncErrorCode, message: string, fix = FIXES[code]): SyncError {
  return new SyncError(code, message, fix);
}

/**
 * A PouchDB or fetch failure as a SyncError. `cors`: whether a no-CORS probe of the server got an
 * answer (true: the server is up, so CORS blocks this page), or 'unknown' where the browser
 * cannot tell (a cross-origin isolated page cannot make that probe).
 */
export function classify(e: unknown, origin: string, cors: boolean | 'unknown' = false): SyncError {
  if (e instanceof SyncError) return e;
  const err = (e ?? {}) as {
    status?: unknown;
    name?: unknown;
    message?: unknown;
    reason?: unknown;
    code?: unknown;
  };
  const status = typeof err.status === 'number' ? err.status : 0;
  const text = String(err.reason ?? err.message ?? e);
  if (status === 401 || err.name === 'unauthorized')
    return syncError('WRONG_CREDENTIALS', 'The server refused the username or password.');
  if (status === 403 || err.name === 'forbidden')
    return syncError('FORBIDDEN', `The server refused access to the database: ${text}`);
  if (err.name === 'QuotaExceededError')
    return syncError('STORAGE_FULL', 'Browser storage is full; the sync stopped.');
  if (status >= 500) return syncError('SERVER_ERROR', `The server answered ${status}: ${text}`);
  // fetch() failing outright: the server is down, the URL is wrong, or CORS blocks the page.
  const network =
    status === 0 &&
    (err.name === 'TypeError' ||
      err.name === 'FetchError' ||
      /fetch|network|ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|socket/i.test(text));
  if (network) {
    if (cors === 'unknown')
      return syncError(
        'UNREACHABLE',
        'The sync server cannot be reached, or it does not let this page read its replies (CORS is not enabled).',
        `${FIXES.UNREACHABLE} If it answers there, it does not allow this app yet. ${corsFix(origin)}`,
      );
    if (cors)
      return syncError(
        'CORS',
        'The server answers, but it does not allow this page to read its replies (CORS is not enabled).',
        corsFix(origin),
      );
    return syncError('UNREACHABLE', 'The sync server cannot be reached.');
  }
  if (status) return syncError('SERVER_ERROR', `The server answered ${status}: ${text}`);
  return syncError('INTERNAL', `Sync failed: ${text}`);
}
