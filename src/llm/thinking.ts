// A reasoning model's thinking in its reply (Qwen3, DeepSeek-R1 distills on a server that leaves
// it in the text): `<think>…</think>`. A call it only considers there is not made, so tool calls
// are looked for outside it (docs/chat.md, "Tool calls written as text"); it is shown as it came.

const OPEN = '<think>';
const CLOSE = '</think>';

/**
 * `text` with its thinking blanked out by line breaks, the same length, so a place in one is the
 * same place in the other and what follows thinking begins a line. Thinking is `<think>` to the
 * next `</think>` or the end, and, where the reply has a `</think>` before any `<think>` (the
 * template opened it in the prompt), all from the start to that `</think>`. One pass.
 */
export function blankThinking(text: string): string {
  if (!text.includes(CLOSE) && !text.includes(OPEN)) return text;
  let out = '';
  let from = 0;
  const close = text.indexOf(CLOSE);
  const open = text.indexOf(OPEN);
  if (close !== -1 && (open === -1 || close < open)) {
    from = close + CLOSE.length;
    out = '\n'.repeat(from);
  }
  for (let at = text.indexOf(OPEN, from); at !== -1; at = text.indexOf(OPEN, from)) {
    const end = text.indexOf(CLOSE, at + OPEN.length);
    const to = end === -1 ? text.length : end + CLOSE.length;
    out += text.slice(from, at) + '\n'.repeat(to - at);
    from = to;
  }
  return out + text.slice(from);
}

/**
 * `text` without its thinking, trimmed: the answer alone. What is indexed for search and recall,
 * sent back to the model as an earlier reply, and read by the memory keeper: a model's musings
 * ("maybe her sister lives in Porto?") are not what it said, and a reasoning model's template
 * leaves earlier thinking out of the history too (docs/chat.md, "Tool calls written as text").
 */
export function withoutThinking(text: string): string {
  if (!text.includes(CLOSE) && !text.includes(OPEN)) return text;
  return blankThinking(text)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
