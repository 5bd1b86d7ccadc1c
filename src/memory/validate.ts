// Validation of everything that comes in (a model's tool arguments, Markdown and JSON imports, the
// app's messages): one set of rules, returning a value, a ToolError or problem sentences, never
// throwing. Also the prototype-safe object helpers that keep `__proto__` an ordinary key.
import type { ErrorCode, JsonValue, Role, ToolError } from './types';

export const MAX_CONTENT_BYTES = 32 * 1024;
/**
 * Deepest nesting of arrays and objects in content. Chromium's IndexedDB refuses a value nested
 * about 1,900 deep (a storage failure, not a clear refusal), and reading one back can overflow the
 * stack of everything that walks it (a listing, an export); no memory needs more than this.
 */
export const MAX_CONTENT_DEPTH = 100;

export function toolError(code: ErrorCode, message: string): ToolError {
  return { status: 'ERROR', code, message };
}

export function isToolError(v: unknown): v is ToolError {
  return typeof v === 'object' && v !== null && (v as { status?: unknown }).status === 'ERROR';
}

/**
 * Checks that `value` is plain JSON (no functions, symbols, BigInt, cycles, non-finite numbers,
 * class instances, undefined at top level) and at most 32 KB as UTF-8 JSON.
 * Returns a fresh deep copy (so later mutation by the caller cannot reach the store).
 */
export function validateContent(
  value: unknown,
  what = 'content',
): { value: JsonValue; json: string } | ToolError {
  if (value === undefined) {
    return toolError(
      'INVALID_CONTENT',
      `${what} is missing; give any JSON value (text, number, object, array)`,
    );
  }
  const seen = new Set<object>();
  // Rough running size so that huge input is refused before it is copied.
  let budget = MAX_CONTENT_BYTES * 4 + 1024;
  let tooLarge = false;
  let depth = 0;
  const copy = (v: unknown, where: string): JsonValue | ToolError => {
    if (tooLarge) return null;
    if (typeof v === 'object' && v !== null && depth >= MAX_CONTENT_DEPTH) {
      return toolError(
        'INVALID_CONTENT',
        `${what} is nested more than ${MAX_CONTENT_DEPTH} levels deep; keep it flatter`,
      );
    }
    switch (typeof v) {
      case 'string':
        budget -= v.length + 2;
        if (budget < 0) tooLarge = true;
        return v;
      case 'boolean':
        budget -= 5;
        return v;
      case 'number':
        if (!Number.isFinite(v)) {
          return toolError(
            'INVALID_CONTENT',
            `${what}${where} is ${String(v)}, which JSON cannot hold`,
          );
        }
        budget -= 8;
        return v;
      case 'object': {
        if (v === null) return null;
        if (seen.has(v)) {
          return toolError(
            'INVALID_CONTENT',
            `${what}${where} refers to itself (a cycle); JSON cannot hold that`,
          );
        }
        const proto = Object.getPrototypeOf(v);
        if (Array.isArray(v)) {
          seen.add(v);
          budget -= 2;
          const out: JsonValue[] = [];
          for (let i = 0; i < v.length && !tooLarge; i++) {
            const item: unknown = v[i];
            depth++;
            const c = copy(item === undefined ? null : item, `${where}[${i}]`);
            depth--;
            if (isToolError(c)) return c;
            out.push(c);
            budget -= 1;
          }
          seen.delete(v);
          return out;
        }
        if (proto !== Object.prototype && proto !== null) {
          const name = (proto?.constructor as { name?: string } | undefined)?.name ?? 'object';
          return toolError('INVALID_CONTENT', `${what}${where} is a ${name}, not plain JSON`);
        }
        seen.add(v);
        budget -= 2;
        const out: { [k: string]: JsonValue } = {};
        for (const key of Object.keys(v)) {
          if (tooLarge) break;
          const item = (v as Record<string, unknown>)[key];
          if (item === undefined) continue; // JSON drops undefined properties
          if (typeof item === 'function' || typeof item === 'symbol') {
            return toolError(
              'INVALID_CONTENT',
              `${what}${where}.${key} is a ${typeof item}, not JSON`,
            );
          }
          budget -= key.length + 3;
          depth++;
          const c = copy(item, `${where}.${key}`);
          depth--;
          if (isToolError(c)) return c;
          setOwn(out, key, c);
        }
        seen.delete(v);
        return out;
      }
      default:
        return toolError('INVALID_CONTENT', `${what}${where} is a ${typeof v}, not JSON`);
    }
  };
  let result: JsonValue | ToolError;
  try {
    result = copy(value, '');
  } catch (e) {
    // Getters that throw, revoked proxies, stack overflow on absurd nesting.
    return toolError('INVALID_CONTENT', `${what} could not be read as JSON: ${errorText(e)}`);
  }
  if (isToolError(result)) return result;
  if (tooLarge) return tooLargeError(what);
  const json = JSON.stringify(result);
  if (utf8Length(json) > MAX_CONTENT_BYTES) return tooLargeError(what);
  return { value: result, json };
}

/**
 * Sets an own, enumerable property, as JSON.parse does: `obj[key] = value` with key `__proto__`
 * would replace the object's prototype instead and lose the key.
 */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** `obj[key]` when it is an own property (never a value inherited from Object.prototype). */
export function getOwn<T>(obj: Record<string, T>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

function isJsonObject(v: JsonValue): v is { [k: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** RFC 7396 JSON merge patch; every key, `__proto__` included, is an ordinary key. */
export function mergePatch(target: JsonValue, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) return patch;
  const out: { [k: string]: JsonValue } = {};
  if (isJsonObject(target)) for (const k of Object.keys(target)) setOwn(out, k, target[k]);
  for (const k of Object.keys(patch)) {
    const v = patch[k];
    if (v === null) delete out[k];
    else setOwn(out, k, mergePatch(getOwn(out, k) ?? null, v));
  }
  return out;
}

function tooLargeError(what: string): ToolError {
  return toolError(
    'CONTENT_TOO_LARGE',
    `${what} is larger than ${MAX_CONTENT_BYTES / 1024} KB as JSON; save a summary, or split it over several paths`,
  );
}

export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

// ---- stored values: one set of rules for the tools, Markdown import and the JSON backup -------

/**
 * Versions are whole numbers from 1 to 2^53 − 1: past that a number no longer counts by ones, and
 * a write at the top refuses to go further (see nextVersion) rather than store an unsafe one.
 */
export const MAX_VERSION = Number.MAX_SAFE_INTEGER;

/**
 * Dates run from year 0000 to 9999 (UTC): ISO 8601 with four-digit years, which is what the JSON
 * backup's `date-time` holds. Any other year would export to a file that cannot be imported.
 */
export const MIN_DATE_MS = Date.parse('0000-01-01T00:00:00.000Z');
export const MAX_DATE_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** Whether `d` is a date from year 0000 to 9999 (what a backup can hold). */
export function dateInRange(d: Date): boolean {
  const t = d.getTime();
  return t >= MIN_DATE_MS && t <= MAX_DATE_MS;
}

/** `d` within year 0000 to 9999 (an invalid date: `fallback`), for a backup to hold. */
export function clampDate(d: Date, fallback: Date): Date {
  const t = d instanceof Date ? d.getTime() : NaN;
  if (Number.isNaN(t)) return fallback;
  return new Date(Math.min(MAX_DATE_MS, Math.max(MIN_DATE_MS, t)));
}

export const ROLES: readonly Role[] = ['user', 'assistant', 'system', 'tool'];

/** null when `value` is a whole number in [min, max], else a sentence naming `name`. */
export function wholeNumberProblem(
  value: unknown,
  name: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max)
    return null;
  return `${name} must be a whole number from ${min} to ${max}, got ${short(value)}`;
}

export function versionProblem(value: unknown, name = 'version'): string | null {
  return wholeNumberProblem(value, name, 1, MAX_VERSION);
}

/** null when `value` is a valid Date from year 0000 to 9999, else a sentence naming `name`. */
export function dateProblem(value: unknown, name: string): string | null {
  if (value instanceof Date && dateInRange(value)) return null;
  const t = value instanceof Date ? value.getTime() : NaN;
  const shown = Number.isNaN(t) ? 'an invalid date' : (value as Date).toISOString();
  return `${name} must be a date from year 0000 to 9999 (UTC), got ${shown}`;
}

/**
 * Problems of a context chunk as it travels in an export (`turn_id`, `sentence_id`, `role`,
 * `text`, `similarity`, `tokenCount`), each a sentence naming `chunk "field"`.
 */
export function chunkProblems(chunk: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const field of ['turn_id', 'sentence_id', 'tokenCount'] as const) {
    const p = wholeNumberProblem(chunk[field], `chunk "${field}"`, 0);
    if (p) out.push(p);
  }
  const similarity = chunk.similarity;
  if (typeof similarity !== 'number' || !Number.isFinite(similarity))
    out.push(`chunk "similarity" must be a finite number, got ${short(similarity)}`);
  const role = chunk.role;
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role))
    out.push(`chunk "role" must be one of ${ROLES.join(', ')}, got ${short(role)}`);
  if (typeof chunk.text !== 'string')
    out.push(`chunk "text" must be a string, got ${short(chunk.text)}`);
  return out;
}

/** The version after `current` for the entry at `path`, or an error at MAX_VERSION. */
export function nextVersion(current: number, path: string): number | ToolError {
  if (current < MAX_VERSION) return current + 1;
  return toolError(
    'INVALID_ARGUMENT',
    `"${path}" is at version ${MAX_VERSION}, the highest version there can be; nothing was ` +
      'written. To change it, save it under a new path',
  );
}

/**
 * The parts of a message the app stores besides its text: `meta` a JSON object, `toolCalls` a
 * list of `{ id, name, … }` records that can be stored (structured-cloned), `toolCallId` text.
 * Returns copies, so later changes by the caller cannot reach the store.
 */
export function validateMessageParts(parts: {
  meta?: unknown;
  toolCalls?: unknown;
  toolCallId?: unknown;
}): { meta?: Record<string, unknown>; toolCalls?: unknown[]; toolCallId?: string } | ToolError {
  const out: { meta?: Record<string, unknown>; toolCalls?: unknown[]; toolCallId?: string } = {};
  if (parts.meta !== undefined && parts.meta !== null) {
    const meta = validateContent(parts.meta, 'meta');
    if (isToolError(meta)) return toolError('INVALID_ARGUMENT', meta.message);
    if (!isJsonObject(meta.value))
      return toolError('INVALID_ARGUMENT', `meta must be a JSON object, got ${short(parts.meta)}`);
    out.meta = meta.value;
  }
  if (parts.toolCalls !== undefined && parts.toolCalls !== null) {
    if (!Array.isArray(parts.toolCalls)) {
      return toolError(
        'INVALID_ARGUMENT',
        `toolCalls must be a list of { id, name, arguments } records, got ${short(parts.toolCalls)}`,
      );
    }
    for (const [i, call] of parts.toolCalls.entries()) {
      const c = call as { id?: unknown; name?: unknown } | null;
      if (
        typeof c !== 'object' ||
        c === null ||
        typeof c.id !== 'string' ||
        typeof c.name !== 'string'
      ) {
        return toolError(
          'INVALID_ARGUMENT',
          `toolCalls[${i}] must be an object with text "id" and "name", got ${short(call)}`,
        );
      }
    }
    try {
      out.toolCalls = structuredClone(parts.toolCalls) as unknown[];
    } catch (e) {
      return toolError('INVALID_ARGUMENT', `toolCalls cannot be stored: ${errorText(e)}`);
    }
  }
  if (parts.toolCallId !== undefined && parts.toolCallId !== null && parts.toolCallId !== '') {
    if (typeof parts.toolCallId !== 'string') {
      return toolError(
        'INVALID_ARGUMENT',
        `toolCallId must be text, got ${short(parts.toolCallId)}`,
      );
    }
    out.toolCallId = parts.toolCallId;
  }
  return out;
}

/** An integer in [min, max], or the default when absent. */
export function intArg(value: unknown, name: string, def: number, min: number, max: number) {
  return rangeArg(value, name, def, min, max, true);
}

/** A number in [min, max], or the default when absent. */
export function numberArg(value: unknown, name: string, def: number, min: number, max: number) {
  return rangeArg(value, name, def, min, max, false);
}

function rangeArg(
  value: unknown,
  name: string,
  def: number,
  min: number,
  max: number,
  integer: boolean,
): number | ToolError {
  if (value === undefined || value === null) return def;
  const okType =
    typeof value === 'number' && (integer ? Number.isInteger(value) : Number.isFinite(value));
  if (!okType || (value as number) < min || (value as number) > max) {
    const kind = integer ? 'a whole number' : 'a number';
    return toolError(
      'INVALID_ARGUMENT',
      `${name} must be ${kind} from ${min} to ${max}, got ${short(value)}`,
    );
  }
  return value as number;
}

export function boolArg(value: unknown, name: string, def: boolean): boolean | ToolError {
  if (value === undefined || value === null) return def;
  if (typeof value !== 'boolean') {
    return toolError('INVALID_ARGUMENT', `${name} must be true or false, got ${short(value)}`);
  }
  return value;
}

/** A short, safe description of any value for error messages. */
export function short(value: unknown): string {
  try {
    if (typeof value === 'string')
      return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
    if (
      typeof value === 'number' ||
      typeof value === 'boolean' ||
      value === null ||
      value === undefined
    ) {
      return String(value);
    }
    if (Array.isArray(value)) return 'an array';
    return `a ${typeof value}`;
  } catch {
    return 'an unreadable value';
  }
}

export function errorText(e: unknown): string {
  try {
    if (e instanceof Error) return e.message;
    return String(e);
  } catch {
    return 'unknown error';
  }
}
