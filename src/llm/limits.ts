// Size caps on what the connector reads from a model server. Every parser works in time
// proportional to its input; these caps bound that input, so a runaway or hostile server costs
// a typed error with the fix instead of unbounded time or memory.

/** Characters in one server-sent event (one line, or the `data:` lines of one event together). */
export const MAX_SSE_EVENT_CHARS = 16 * 2 ** 20;

/** Characters of one streamed reply: its text and tool-call arguments together. */
export const MAX_REPLY_CHARS = 16 * 2 ** 20;

/** Characters of a reply searched for prompted tool calls (a real call is far smaller). */
export const MAX_TOOL_PARSE_CHARS = 2 ** 20;

/** Characters of an error reply read for its message (an error page says it in the first few). */
export const MAX_ERROR_BODY_CHARS = 64 * 2 ** 10;

/**
 * Nesting depth of tool-call JSON. Deeper values overflow the stack of `JSON.stringify`,
 * `structuredClone` and schema validation; no tool's arguments come near it.
 */
export const MAX_JSON_DEPTH = 64;

/** A cap in words: "16 MB", "64 KB" (characters, counted as bytes the way people read sizes). */
export function sizeInWords(chars: number): string {
  if (chars >= 2 ** 20) return `${Math.round(chars / 2 ** 20)} MB`;
  if (chars >= 2 ** 10) return `${Math.round(chars / 2 ** 10)} KB`;
  return `${chars} characters`;
}
