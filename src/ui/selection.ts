// The person's text selection inside one component's shadow root: what "Remember this" takes
// when words of a message are selected (docs/chat.md). A selection inside a shadow root is read
// with Selection.getComposedRanges where the browser has it (else the root's own getSelection,
// else the document's range), so its ends are the nodes inside the root, not its host.

/** Selected words inside `within`, and where they end on screen. */
export interface SelectedWords {
  text: string;
  /** The selection's box, in viewport coordinates. */
  rect: DOMRect;
}

/**
 * The selection, when it lies wholly inside `within` (an element of the shadow root `root`) and
 * holds words; undefined otherwise (nothing selected, or a selection that runs outside it).
 */
export function selectionWithin(root: ShadowRoot, within: Element): SelectedWords | undefined {
  // Not `isCollapsed`: Chromium answers it for the selection as the document sees it, which a
  // selection inside a shadow root can leave collapsed at the host.
  const selection = document.getSelection();
  if (!selection || selection.rangeCount === 0) return undefined;
  const ends = composedRange(selection, root);
  if (!ends || !within.contains(ends.startContainer) || !within.contains(ends.endContainer)) {
    return undefined;
  }
  const text = selection.toString().trim();
  if (!text) return undefined;
  const range = document.createRange();
  range.setStart(ends.startContainer, ends.startOffset);
  range.setEnd(ends.endContainer, ends.endOffset);
  return { text, rect: range.getBoundingClientRect() };
}

type Ends = Pick<StaticRange, 'startContainer' | 'startOffset' | 'endContainer' | 'endOffset'>;

function composedRange(selection: Selection, root: ShadowRoot): Ends | undefined {
  if (typeof selection.getComposedRanges === 'function') {
    try {
      return selection.getComposedRanges({ shadowRoots: [root] })[0];
    } catch {
      // An older form took the roots as arguments (Safari 17).
      const older = selection.getComposedRanges as unknown as (...r: ShadowRoot[]) => StaticRange[];
      return older.call(selection, root)[0];
    }
  }
  const own = (root as ShadowRoot & { getSelection?: () => Selection | null }).getSelection?.();
  return (own ?? selection).rangeCount ? (own ?? selection).getRangeAt(0) : undefined;
}
