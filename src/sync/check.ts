// Settings → Sync's "Check server" (docs/sync.md, "Setting up"): before any sync, asks the server
// the four things a first sync needs, one request each, and says which is missing: does it
// answer, does it let this app read its replies (CORS), does it take the login, and is the
// database there (or may this user create it). Reads only; it creates and writes nothing.
import { corsFix } from './errors';

export type CheckStep = 'address' | 'reach' | 'cors' | 'login' | 'database';

export interface CheckLine {
  step: CheckStep;
  /** true: fine; false: this is what is missing; null: could not be told (see the text). */
  ok: boolean | null;
  /** What was found, and the fix where something is missing (plain text, never markup). */
  text: string;
}

export interface ServerCheck {
  /** True when every line is fine: Sync now should work. */
  ok: boolean;
  lines: CheckLine[];
}

export interface CheckOptions {
  fetch: typeof fetch;
  /** This app's origin, for the CORS sentence. */
  origin: string;
  /**
   * Whether the server answers a no-CORS request (true), nothing answers (false), or the page
   * cannot tell ('unknown': a cross-origin isolated page cannot make that request).
   */
  probe?: (url: string) => Promise<boolean | 'unknown'>;
  /** Longest wait for one answer (default 10 s). */
  timeoutMs?: number;
}

export interface CheckTarget {
  url: string;
  database: string;
  username: string;
  password: string;
}

/** Asks the server, step by step; stops at the first step that fails the rest depend on. */
export async function checkServer(
  target: CheckTarget,
  options: CheckOptions,
): Promise<ServerCheck> {
  const lines: CheckLine[] = [];
  const done = () => ({ ok: lines.every((l) => l.ok === true), lines });
  const base = String(target.url ?? '')
    .trim()
    .replace(/\/+$/, '');
  let url: URL | undefined;
  try {
    url = new URL(base);
  } catch {
    // handled below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    lines.push({
      step: 'address',
      ok: false,
      text: base
        ? `"${base}" is not a web address: enter it as http://host:5984 or https://host.`
        : 'Enter the server’s address first, e.g. http://127.0.0.1:5984.',
    });
    return done();
  }
  const timeout = options.timeoutMs ?? 10_000;
  const auth: Record<string, string> = target.username
    ? { Authorization: `Basic ${base64(`${target.username}:${target.password}`)}` }
    : {};
  const ask = (path: string, headers: Record<string, string> = {}) =>
    options.fetch(`${base}${path}`, {
      mode: 'cors',
      credentials: 'omit',
      cache: 'no-store',
      headers: { Accept: 'application/json', ...headers },
      signal: AbortSignal.timeout(timeout),
    });
  const json = async (r: Response): Promise<Record<string, unknown>> => {
    try {
      const v: unknown = await r.json();
      return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  };
  const allowCors = corsFix(options.origin);

  // 1. Does it answer, and may this app read the answer? (A plain GET: no CORS preflight.)
  let welcome: Response;
  try {
    welcome = await ask('/');
  } catch (e) {
    const timedOut = (e as { name?: string })?.name === 'TimeoutError';
    const probe = options.probe ?? (async () => 'unknown' as const);
    const answers = timedOut ? false : await probe(base).catch(() => false);
    if (answers === true) {
      lines.push({ step: 'reach', ok: true, text: `The server answers at ${base}.` });
      lines.push({
        step: 'cors',
        ok: false,
        text: `It does not let this app (${options.origin}) read its replies. ${allowCors}`,
      });
    } else if (answers === 'unknown') {
      lines.push({
        step: 'reach',
        ok: null,
        text:
          `No answer this app may read from ${base}: either nothing runs there, or the server ` +
          `does not allow this app (${options.origin}). Open ${base} in a new tab: if it shows ` +
          '{"couchdb":"Welcome", …}, the server runs and only this app’s permission is ' +
          `missing: ${allowCors} Otherwise start CouchDB, or correct the address.`,
      });
    } else {
      lines.push({
        step: 'reach',
        ok: false,
        text: timedOut
          ? `${base} did not answer within ${timeout / 1000} s. Check that CouchDB is running and the address is right.`
          : `Nothing answers at ${base}. Check that CouchDB is running and the address is right.`,
      });
    }
    return done();
  }
  const hello = await json(welcome);
  // A server that lets nobody in without a login (require_valid_user) answers 401 even here:
  // it answers, and this app may read the answer; the login step says whether ours is right.
  if (welcome.status === 401) {
    lines.push({
      step: 'reach',
      ok: true,
      text: `The server answers at ${base} (it asks for a login).`,
    });
  } else if (!welcome.ok || !('couchdb' in hello)) {
    lines.push({
      step: 'reach',
      ok: false,
      text: `Something answers at ${base} (${welcome.status}), but not as CouchDB does: check the address (no database name in it).`,
    });
    return done();
  } else {
    const version = typeof hello.version === 'string' ? ` ${hello.version}` : '';
    lines.push({ step: 'reach', ok: true, text: `CouchDB${version} answers at ${base}.` });
  }

  // 2. The login: it needs CORS to allow the Authorization header too (a preflight).
  let roles: string[] = [];
  try {
    const session = await ask('/_session', auth);
    if (session.status === 401) {
      lines.push({ step: 'cors', ok: true, text: `It lets this app (${options.origin}) in.` });
      lines.push({
        step: 'login',
        ok: false,
        text: 'The server refused the username or password: check them (a CouchDB user, or its admin).',
      });
      return done();
    }
    const ctx = (await json(session)).userCtx as { name?: unknown; roles?: unknown } | undefined;
    roles = Array.isArray(ctx?.roles) ? ctx.roles.filter((r) => typeof r === 'string') : [];
  } catch {
    lines.push({
      step: 'cors',
      ok: false,
      text: target.username
        ? 'It lets this app read plain replies, but not send the login: allow the "authorization" ' +
          `header too ([cors] headers = accept, authorization, content-type, origin, referer). ${allowCors}`
        : `It does not let this app (${options.origin}) ask about logins. ${allowCors}`,
    });
    return done();
  }
  lines.push({ step: 'cors', ok: true, text: `It lets this app (${options.origin}) in.` });
  lines.push({
    step: 'login',
    ok: true,
    text: target.username
      ? `It accepts the login of ${target.username}.`
      : 'No username given: that works only where the server lets anyone in.',
  });

  // 3. The database.
  const db = String(target.database ?? '').trim();
  if (!/^[a-z][a-z0-9_$()+/-]*$/.test(db)) {
    lines.push({
      step: 'database',
      ok: false,
      text: db
        ? `"${db}" is not a CouchDB database name: use lower-case letters, digits and _$()+-/, starting with a letter.`
        : 'Enter a database name (e.g. memory).',
    });
    return done();
  }
  let info: Response;
  try {
    info = await ask(`/${encodeURIComponent(db)}`, auth);
  } catch {
    lines.push({
      step: 'database',
      ok: false,
      text: `No readable answer about the database "${db}": the server stopped answering. Check again.`,
    });
    return done();
  }
  const admin = roles.includes('_admin');
  if (info.ok) {
    const count = (await json(info)).doc_count;
    const docs =
      typeof count === 'number' ? ` (${count} ${count === 1 ? 'document' : 'documents'})` : '';
    lines.push({ step: 'database', ok: true, text: `The database "${db}" is there${docs}.` });
  } else if (info.status === 404) {
    lines.push(
      admin
        ? {
            step: 'database',
            ok: true,
            text: `The database "${db}" is not there yet; the first sync creates it.`,
          }
        : {
            step: 'database',
            ok: false,
            text: `The database "${db}" is not there, and this user may not create it: create it in Fauxton (Databases → Create Database), or log in as the server’s admin.`,
          },
    );
  } else if (info.status === 401 || info.status === 403) {
    lines.push({
      step: 'database',
      ok: false,
      text: target.username
        ? `${target.username} may not open "${db}": add the user as a member of the database (Fauxton → the database → Permissions), or pick another database.`
        : `The database "${db}" needs a login: enter a CouchDB username and password.`,
    });
  } else {
    lines.push({
      step: 'database',
      ok: false,
      text: `The server answered ${info.status} about the database "${db}": look at the CouchDB log.`,
    });
  }
  return done();
}

/** Base64 of a text's UTF-8 bytes (btoa takes only Latin-1). */
function base64(text: string): string {
  let bin = '';
  for (const b of new TextEncoder().encode(text)) bin += String.fromCharCode(b);
  return btoa(bin);
}
