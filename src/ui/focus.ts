// Where the keyboard's focus is, looking into shadow roots, and whether it was lost: an action
// that removes or hides the control it was started from (a reply re-drawn, a menu closed, a pane
// hidden on a phone) must put focus somewhere sensible, not leave it on the page's <body>.

/** The element that has focus, looking into shadow roots; undefined when it is <body>. */
export function deepActiveElement(): HTMLElement | undefined {
  let el: Element | null = document.activeElement;
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
  return el instanceof HTMLElement && el !== document.body ? el : undefined;
}

/** Whether focus was lost: on <body>, on an element gone from the page, or on one not shown. */
export function focusLost(): boolean {
  const el = deepActiveElement();
  if (!el || !el.isConnected) return true;
  // Focus stays on an element a hidden pane holds until the browser's next style update.
  return typeof el.checkVisibility === 'function' && !el.checkVisibility();
}
