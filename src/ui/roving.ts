// Keyboard moves in a list that is one Tab stop (a roving tabindex, WAI-ARIA APG): which key goes
// where, as a pure function, and the focusable elements of an item, found through shadow roots
// and slots in the order they are shown (docs/chat.md, "Keyboard").

/** Where a key sends focus in a list: a neighbour, an end, or nowhere (the key is not ours). */
export type Step = 'previous' | 'next' | 'first' | 'last';

/** The step a key asks for along `axis`, or undefined when the key means nothing there. */
export function stepOf(key: string, axis: 'vertical' | 'horizontal'): Step | undefined {
  if (key === 'Home') return 'first';
  if (key === 'End') return 'last';
  if (axis === 'vertical') {
    if (key === 'ArrowUp') return 'previous';
    if (key === 'ArrowDown') return 'next';
  } else {
    if (key === 'ArrowLeft') return 'previous';
    if (key === 'ArrowRight') return 'next';
  }
  return undefined;
}

/**
 * The index `step` leads to from `at` among `count` items, or undefined past either end (the
 * focus stays: a list that wraps around hides where it ends). `at` -1: from before the first.
 */
export function stepIndex(step: Step, at: number, count: number): number | undefined {
  if (count === 0) return undefined;
  if (step === 'first') return 0;
  if (step === 'last') return count - 1;
  const to = step === 'previous' ? at - 1 : at + 1;
  return to >= 0 && to < count ? to : undefined;
}

const FOCUSABLE = 'a[href], button:not(:disabled), summary, input:not(:disabled), textarea, select';

/**
 * The elements that take focus inside `root`, in the order they are shown: through the open
 * shadow roots of its elements and what slots show, leaving out what is not rendered (hidden,
 * in a closed `<details>`).
 */
export function focusablesIn(root: Element | ShadowRoot): HTMLElement[] {
  const found: HTMLElement[] = [];
  const visit = (parent: Element | ShadowRoot) => {
    const children =
      parent instanceof HTMLSlotElement
        ? parent.assignedElements({ flatten: true })
        : [...parent.children];
    for (const el of children) {
      if (el instanceof HTMLElement && el.matches(FOCUSABLE) && el.checkVisibility())
        found.push(el);
      // A shadow host shows its shadow tree (its children only through slots).
      visit(el.shadowRoot ?? el);
    }
  };
  visit(root);
  return found;
}
