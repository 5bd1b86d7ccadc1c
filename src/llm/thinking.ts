// A reasoning model's thinking in its reply (Qwen3, DeepSeek-R1 distills on a server that leaves
// it in the text): `<think>…</think>`. A call it only considers there is not made, so tool calls
// are looked for outside it (docs/chat.md, "Tool calls written as text"); it is shown as it came.

export const THINK_OPEN = '<think>';
export const THINK_CLOSE = '</think>';
const BOTH_TAGS = [THINK_OPEN, THINK_CLOSE];
const CLOSE_TAG = [THINK_CLOSE];

/**
 * `text` with its thinking blanked out by line breaks, the same length, so a place in one is the
 * same place in the other and what follows thinking begins a line. Thinking starts the reply:
 * `<think>` before anything but white space, to the next `</think>` or the end; or, where the
 * reply has a `</think>` with no `<think>` before it (the template opened it in the prompt), all
 * from the start to that `</think>`. Tags an answer mentions later (a word about `<think>` tags) are text.
 */
export function blankThinking(text: string): string {
  const open = text.indexOf(THINK_OPEN);
  const close = text.indexOf(THINK_CLOSE);
  let to = -1;
  if (open !== -1 && !text.slice(0, open).trim()) {
    const end = text.indexOf(THINK_CLOSE, open + THINK_OPEN.length);
    to = end === -1 ? text.length : end + THINK_CLOSE.length;
  } else if (close !== -1 && (open === -1 || close < open)) {
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

/** What a piece of a streamed reply adds: to its thinking, to its answer, or both. */
export interface ThinkingPiece {
  /** Words added to the thinking (without its tags). */
  thought: string;
  /** Words added to the answer. */
  answer: string;
  /**
   * A `</think>` with no `<think>` before it (the template opened the thinking in the prompt): all
   * taken as answer so far was thinking, and `thought` goes on from it.
   */
  wasThinking?: boolean;
}

/**
 * The longest end of `text` that is the start of one of `tags` (a "</thi" or "<tool" split
 * across tokens): what a streaming reader holds back until the next piece decides it.
 */
export function tagStartAtEnd(text: string, tags: readonly string[]): number {
  let keep = 0;
  for (const tag of tags) {
    for (let n = Math.min(tag.length - 1, text.length); n > keep; n--) {
      if (text.endsWith(tag.slice(0, n))) {
        keep = n;
        break;
      }
    }
  }
  return keep;
}

/**
 * Reads a reply as it streams the way `splitThinking` reads it whole, so the chat can show the
 * thinking apart while it arrives: `<think>` before anything but white space opens it, the next
 * `</think>` closes it; a `</think>` with no `<think>` before it makes all before it thinking. Text that
 * may be the start of a tag is held back until it is decided; each piece is looked at once.
 */
export function thinkingReader(): {
  read: (piece: string) => ThinkingPiece;
  /** The reply ended: what was held back, where it was going. */
  end: () => ThinkingPiece;
} {
  let state: 'start' | 'thinking' | 'answer' | 'after' = 'start';
  let held = '';
  /** `held` is white space alone (nothing held, or what came before anything else). */
  let heldBlank = true;
  const end = (): ThinkingPiece => {
    const rest = held;
    held = '';
    return state === 'thinking' ? { thought: rest, answer: '' } : { thought: '', answer: rest };
  };
  const read = (piece: string): ThinkingPiece => {
    // White space before anything: held as it comes, not looked at again for each piece.
    if (state === 'start' && heldBlank && !/\S/.test(piece)) {
      held += piece;
      return { thought: '', answer: '' };
    }
    let text = held + piece;
    held = '';
    heldBlank = false;
    if (state === 'start') {
      const lead = text.trimStart();
      if (lead.startsWith(THINK_OPEN)) {
        state = 'thinking';
        text = lead.slice(THINK_OPEN.length);
      } else if (THINK_OPEN.startsWith(lead)) {
        held = text; // white space, or the start of `<think>`
        return { thought: '', answer: '' };
      } else {
        state = 'answer';
      }
    }
    if (state === 'after') return { thought: '', answer: text };
    const at = text.indexOf(THINK_CLOSE);
    // An answer that mentions `<think>` first has no thinking: a later `</think>` is its text.
    const open = state === 'answer' ? text.indexOf(THINK_OPEN) : -1;
    if (open !== -1 && (at === -1 || open < at)) {
      state = 'after';
      return { thought: '', answer: text };
    }
    if (at !== -1) {
      const wasThinking = state === 'answer';
      state = 'after';
      const before = text.slice(0, at);
      const after = text.slice(at + THINK_CLOSE.length);
      return wasThinking
        ? { thought: before, answer: after, wasThinking }
        : { thought: before, answer: after };
    }
    const keep = tagStartAtEnd(text, state === 'answer' ? BOTH_TAGS : CLOSE_TAG);
    held = text.slice(text.length - keep);
    const shown = text.slice(0, text.length - keep);
    return state === 'thinking' ? { thought: shown, answer: '' } : { thought: '', answer: shown };
  };
  return { read, end };
}
