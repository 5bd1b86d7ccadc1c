// Tool calls for the model in this browser, constrained by a llama.cpp grammar (GBNF): the reply
// is either free text or one `<tool_call>{"name":…,"arguments":…}</tool_call>` whose arguments
// match that tool's JSON schema, so even a small model's calls always parse. The converter covers
// the schema keywords the app's tools use (type and type lists, properties and required, enum,
// items, integer and number bounds, string lengths, anyOf/oneOf); anything else is any JSON
// value there, and the tool's validator still checks the call. docs/in-page-model.md.
import type { ToolCall, ToolSpec } from '../types';

/** Where a call starts and ends in the reply (as prompted tools write it). */
export const CALL_OPEN = '<tool_call>';
export const CALL_CLOSE = '</tool_call>';

type Schema = Record<string, unknown>;

/** A GBNF string literal for `text`. */
export function literal(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n')}"`;
}

/**
 * The grammar for integers from `lo` to `hi` (both included, whole numbers): digits only, no
 * leading zeros, as JSON writes them.
 */
export function intRange(lo: number, hi: number): string {
  if (lo > hi) throw new RangeError(`no integer from ${lo} to ${hi}`);
  const parts: string[] = [];
  if (lo < 0) {
    parts.push(`"-" (${positiveRange(Math.max(1, -hi), -lo)})`);
    if (hi >= 0) parts.push(positiveRange(0, hi));
  } else parts.push(positiveRange(lo, hi));
  return parts.join(' | ');
}

/** Alternatives for `lo`..`hi`, 0 ≤ lo ≤ hi, split by digit count. */
function positiveRange(lo: number, hi: number): string {
  const out: string[] = [];
  let from = lo;
  while (from <= hi) {
    const digits = String(from).length;
    const top = Math.min(hi, 10 ** digits - 1);
    out.push(...sameLength(String(from), String(top)));
    from = top + 1;
  }
  return out.join(' | ');
}

/** Alternatives for the digit strings from `lo` to `hi` (same length). */
function sameLength(lo: string, hi: string): string[] {
  if (lo.length === 1) return [lo === hi ? literal(lo) : `[${lo}-${hi}]`];
  const rest = lo.length - 1;
  if (lo[0] === hi[0]) {
    return sameLength(lo.slice(1), hi.slice(1)).map((tail) => `${literal(lo[0]!)} (${tail})`);
  }
  const out: string[] = [];
  const any = (n: number) => `[0-9]{${n}}`;
  const loTail = lo.slice(1);
  const hiTail = hi.slice(1);
  const loFull = /^0+$/.test(loTail);
  const hiFull = /^9+$/.test(hiTail);
  const first = Number(lo[0]);
  const last = Number(hi[0]);
  // The first digit's own branch only when the rest does not run over every value.
  const midFrom = loFull ? first : first + 1;
  const midTo = hiFull ? last : last - 1;
  if (!loFull) {
    out.push(...sameLength(loTail, '9'.repeat(rest)).map((tail) => `${literal(lo[0]!)} (${tail})`));
  }
  if (midFrom <= midTo) {
    out.push(
      `${midFrom === midTo ? literal(String(midFrom)) : `[${midFrom}-${midTo}]`} ${any(rest)}`,
    );
  }
  if (!hiFull) {
    out.push(...sameLength('0'.repeat(rest), hiTail).map((tail) => `${literal(hi[0]!)} (${tail})`));
  }
  return out;
}

/** Builds the rules of one grammar, naming each schema's rule once. */
class Rules {
  readonly lines: string[] = [];
  private readonly names = new Set<string>();

  constructor() {
    this.add('ws', '" "?');
    this.add('jstring', `"\\"" jchar* "\\""`);
    this.add('jchar', '[^"\\\\\\x00-\\x1f] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})');
    this.add('jint', '"-"? ("0" | [1-9] [0-9]{0,15})');
    this.add('jnumber', 'jint ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?');
    this.add('jvalue', 'jobject | jarray | jstring | jnumber | "true" | "false" | "null"');
    this.add('jobject', '"{" ws (jstring ":" ws jvalue ("," ws jstring ":" ws jvalue)*)? ws "}"');
    this.add('jarray', '"[" ws (jvalue ("," ws jvalue)*)? ws "]"');
  }

  add(name: string, body: string): string {
    if (!this.names.has(name)) {
      this.names.add(name);
      this.lines.push(`${name} ::= ${body}`);
    }
    return name;
  }

  /** A fresh rule name from `hint` (letters, digits and dashes, as GBNF wants). */
  fresh(hint: string): string {
    const base = hint.replace(/[^A-Za-z0-9-]+/g, '-').replace(/^-+|-+$/g, '') || 'r';
    let name = base;
    for (let i = 2; this.names.has(name); i++) name = `${base}-${i}`;
    return name;
  }

  /** The rule for a value matching `schema`. */
  value(schema: unknown, hint: string): string {
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'jvalue';
    const s = schema as Schema;
    if (Array.isArray(s.enum) && s.enum.length) {
      return this.add(this.fresh(hint), s.enum.map((v) => literal(JSON.stringify(v))).join(' | '));
    }
    const variants = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : null;
    if (variants?.length) {
      const name = this.fresh(hint);
      this.names.add(name); // reserved before the variants take names
      const body = variants.map((v, i) => this.value(v, `${name}-${i + 1}`)).join(' | ');
      this.lines.push(`${name} ::= ${body}`);
      return name;
    }
    if (Array.isArray(s.type)) {
      const types = s.type.filter((t): t is string => typeof t === 'string');
      if (!types.length) return 'jvalue';
      const name = this.fresh(hint);
      this.names.add(name);
      const body = types.map((t, i) => this.value({ ...s, type: t }, `${name}-${i + 1}`));
      this.lines.push(`${name} ::= ${body.join(' | ')}`);
      return name;
    }
    switch (s.type) {
      case 'string':
        return this.string(s, hint);
      case 'integer':
        return this.integer(s, hint);
      case 'number':
        return this.number(s, hint);
      case 'boolean':
        return this.add('jbool', '"true" | "false"');
      case 'null':
        return this.add('jnull', '"null"');
      case 'array': {
        if (s.items === undefined) return 'jarray';
        const item = this.value(s.items, `${hint}-item`);
        return this.add(this.fresh(hint), `"[" ws (${item} ("," ws ${item})*)? ws "]"`);
      }
      case 'object':
        return this.object(s, hint);
      default:
        return 'jvalue';
    }
  }

  private string(s: Schema, hint: string): string {
    const min = whole(s.minLength) ?? 0;
    const max = whole(s.maxLength);
    if (min === 0 && max === undefined) return 'jstring';
    const count = max === undefined ? `{${min},}` : `{${min},${max}}`;
    return this.add(this.fresh(hint), `"\\"" jchar${count} "\\""`);
  }

  private integer(s: Schema, hint: string): string {
    const lo = bound(s.minimum, s.exclusiveMinimum, 1, Math.ceil);
    const hi = bound(s.maximum, s.exclusiveMaximum, -1, Math.floor);
    if (lo === undefined || hi === undefined) return 'jint';
    return this.add(this.fresh(hint), intRange(lo, hi));
  }

  /** Numbers between whole-number bounds (0 to 1, say); other bounds are left to the validator. */
  private number(s: Schema, hint: string): string {
    const lo = typeof s.minimum === 'number' ? s.minimum : undefined;
    const hi = typeof s.maximum === 'number' ? s.maximum : undefined;
    if (lo === undefined || hi === undefined || !Number.isInteger(lo) || !Number.isInteger(hi)) {
      return 'jnumber';
    }
    if (lo < 0 || hi <= lo) return 'jnumber';
    // lo ≤ x < hi with any fraction, or hi itself (written `1`, `1.0`, `1.00`…).
    const below = intRange(lo, hi - 1);
    return this.add(
      this.fresh(hint),
      `(${below}) ("." [0-9]{1,16})? | ${literal(String(hi))} ("." "0"{1,16})?`,
    );
  }

  private object(s: Schema, hint: string): string {
    const props =
      typeof s.properties === 'object' && s.properties !== null
        ? Object.entries(s.properties as Record<string, unknown>)
        : [];
    if (!props.length) return 'jobject';
    const required = new Set(Array.isArray(s.required) ? s.required : []);
    // Required properties first, then the optional ones, each in the schema's order.
    const ordered = [
      ...props.filter(([k]) => required.has(k)),
      ...props.filter(([k]) => !required.has(k)),
    ];
    const pair = ([key, schema]: [string, unknown]) =>
      `${literal(JSON.stringify(key) + ':')} ws ${this.value(schema, `${hint}-${key}`)}`;
    const pairs = ordered.map(pair);
    const needed = ordered.filter(([k]) => required.has(k)).length;
    let body: string;
    if (needed > 0) {
      body = pairs
        .map((p, i) => (i === 0 ? p : i < needed ? `"," ws ${p}` : `("," ws ${p})?`))
        .join(' ');
    } else {
      // None required: any of them may come first, and each one after it may follow.
      const tails = pairs.map((_, i) =>
        pairs
          .slice(i + 1)
          .map((p) => `("," ws ${p})?`)
          .join(' '),
      );
      body = `(${pairs.map((p, i) => `${p} ${tails[i]}`.trim()).join(' | ')})?`;
    }
    return this.add(this.fresh(hint), `"{" ws ${body} ws "}"`);
  }
}

function whole(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}

/** An integer bound from `minimum`/`maximum` or their exclusive forms (draft 6 numbers). */
function bound(
  inclusive: unknown,
  exclusive: unknown,
  step: 1 | -1,
  round: (n: number) => number,
): number | undefined {
  if (typeof exclusive === 'number')
    return round(exclusive) + (Number.isInteger(exclusive) ? step : 0);
  return typeof inclusive === 'number' ? round(inclusive) : undefined;
}

/** The grammar for one value matching `schema` (its rule is `root`). */
export function schemaGrammar(schema: Record<string, unknown>): string {
  const rules = new Rules();
  const top = rules.value(schema, 'value');
  return [`root ::= ${top}`, ...rules.lines].join('\n');
}

/**
 * The grammar for a reply to a chat with `tools`: free text (which does not start with `<` and
 * has no `<t` in it, so a call cannot begin as text and go unconstrained), or one call of a tool with arguments that match its
 * schema. With `required`, only a call.
 */
export function toolGrammar(tools: readonly ToolSpec[], required = false): string {
  const rules = new Rules();
  const calls = tools.map((t) => {
    const args = rules.value(t.function.parameters, `${t.function.name}-args`);
    const name = literal(JSON.stringify(t.function.name));
    return rules.add(
      rules.fresh(`call-${t.function.name}`),
      `"{" ws ${literal('"name":')} ws ${name} "," ws ${literal('"arguments":')} ws ${args}`,
    );
  });
  const root = required ? 'call' : 'call | text';
  return [
    `root ::= ${root}`,
    `call ::= ${literal(CALL_OPEN)} (${calls.join(' | ')}) ws ${literal('}' + CALL_CLOSE)}`,
    // No `<t` anywhere in text: a call's start cannot hide in it.
    'text ::= [^<] tchar*',
    'tchar ::= [^<] | "<" [^t]',
    ...rules.lines,
  ].join('\n');
}

/**
 * The call in a reply made under `toolGrammar`, or null for a text reply. A reply cut short (by
 * the token limit or Stop) inside a call has none.
 */
export function parseGrammarCall(text: string, makeId: () => string): ToolCall | null {
  const body = text.trim();
  if (!body.startsWith(CALL_OPEN) || !body.endsWith(CALL_CLOSE)) return null;
  try {
    const call = JSON.parse(body.slice(CALL_OPEN.length, -CALL_CLOSE.length)) as {
      name?: unknown;
      arguments?: unknown;
    };
    if (typeof call.name !== 'string') return null;
    return {
      id: makeId(),
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) },
    };
  } catch {
    return null;
  }
}
