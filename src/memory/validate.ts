// Validation of tool arguments that come from a model: returns a value or a ToolError, never throws.
import type { ErrorCode, JsonValue, ToolError } from './types';

export const MAX_CONTENT_BYTES = 32 * 1024;

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
  const copy = (v: unknown, where: string): JsonValue | ToolError => {
    if (tooLarge) return null;
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
            const c = copy(item === undefined ? null : item, `${where}[${i}]`);
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
          const c = copy(item, `${where}.${key}`);
          if (isToolError(c)) return c;
          out[key] = c;
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
