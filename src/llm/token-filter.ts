// The prompted-mode token filter: once a tool call starts in the streamed text, the rest is not
// shown. It holds back at most a marker's length, so a reply of any size costs time in
// proportion to its length.

const CALL_MARKERS = ['<tool_call>', '[TOOL_CALLS]'];
const MARKER_CHARS = new Set(CALL_MARKERS.join(''));

/** The longest end of `text` that is the start of a marker (a "<tool" split across tokens). */
function markerStartAtEnd(text: string): number {
  if (!MARKER_CHARS.has(text.slice(-1))) return 0; // most tokens: no marker ends in them
  let keep = 0;
  for (const marker of CALL_MARKERS) {
    for (let n = Math.min(marker.length - 1, text.length); n > keep; n--) {
      if (text.endsWith(marker.slice(0, n))) {
        keep = n;
        break;
      }
    }
  }
  return keep;
}

/**
 * In prompted mode, stop showing tokens once a tool call starts. Text that could be the start
 * of a marker (a trailing "<tool" split across tokens) is held back until it is decided. Only
 * the held-back text and the new token are searched: a marker cannot start in text already
 * shown, since that text ended with no marker's start.
 */
export function tokenFilter(
  mode: 'native' | 'prompted',
  forward: (t: string) => void,
): (t: string) => void {
  if (mode === 'native') return forward;
  let held = '';
  let hidden = false;
  return (t) => {
    if (hidden) return;
    const pending = held + t;
    let at = -1;
    for (const marker of CALL_MARKERS) {
      const i = pending.indexOf(marker);
      if (i !== -1 && (at === -1 || i < at)) at = i;
    }
    if (at !== -1) {
      hidden = true;
      held = '';
      if (at > 0) forward(pending.slice(0, at));
      return;
    }
    const upTo = pending.length - markerStartAtEnd(pending);
    if (upTo > 0) forward(pending.slice(0, upTo));
    held = pending.slice(upTo);
  };
}

/**
 * `text` up to where a tool call starts: what a stopped or broken reply keeps of itself (a call
 * half written is neither said nor run).
 */
export function beforeToolCall(text: string): string {
  let at = text.length;
  for (const marker of CALL_MARKERS) {
    const i = text.indexOf(marker);
    if (i !== -1 && i < at) at = i;
  }
  return text.slice(0, at);
}
