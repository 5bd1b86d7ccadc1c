// A reasoning model's thinking in its reply (Qwen3, DeepSeek-R1 distills on a server that leaves
// it in the text): `<think>…</think>`. A call it only considers there is not made, so tool calls
// are looked for outside it (docs/chat.md, "Tool calls written as text"); it is shown as it came.

export const THINK_OPEN = '<think>';
export const THINK_CLOSE = '</think>';

/**
 * `text` with its thinking blanked out by line breaks, the same length, so a place in one is the
 * same place in the other and what follows thinking begins a line. Thinking starts the reply:
 * `<think>` before anything but white space, to the next `</think>` or the end; or, where the
 * reply has a `</think>` and no `<think>` (the template opened it in the prompt), all from the
 * start to that `</think>`. Tags an answer mentions later (a word about `<think>` tags) are text.
 */
export function blankThinking(text: string): string {
  const open = text.indexOf(THINK_OPEN);
  const close = text.indexOf(THINK_CLOSE);
  let to = -1;
  if (open !== -1 && !text.slice(0, open).trim()) {
    const end = text.indexOf(THINK_CLOSE, open + THINK_OPEN.length);
    to = end === -1 ? text.length : end + THINK_CLOSE.length;
  } else if (open === -1 && close !== -1) {
    to = close + THINK_CLOSE.length;
  }
  return to === -1 ? text : '\n'.repeat(to) + text.slice(to);
}

/**
 * `text` without its thinking, trimmed: the answer alone. What is indexed for search and recall,
 * sent back to the model as an earlier reply, and read by the memory keeper: a model's musings
 * ("maybe her sister lives in Porto?") are not what it said, and a reasoning model's template
 * leaves earlier thinking out of the history too (docs/chat.md, "Tool calls written as text").
 */
export function withoutThinking(text: string): string {
  if (!text.includes(THINK_CLOSE) && !text.includes(THINK_OPEN)) return text;
  return blankThinking(text)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * A reply that starts with thinking, as the chat shows it: the thinking's words (without its
 * tags) apart from the answer after it; undefined for a reply without thinking at its start.
 */
export function splitThinking(text: string): { thought: string; answer: string } | undefined {
  const blank = blankThinking(text);
  if (blank === text) return undefined;
  const at = blank.search(/[^\n]/);
  const to = at === -1 ? text.length : at;
  const thought = text.slice(0, to).replace(THINK_OPEN, '').replace(THINK_CLOSE, '').trim();
  return { thought, answer: text.slice(to).trim() };
}
