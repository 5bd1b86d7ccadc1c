// The app's DOM events: leaf components emit them (bubbling, composed); sm-app acts on them.

export interface SelectPathDetail {
  /** A memory path (entry or heading); '' for the root. */
  path: string;
}

export interface OpenMessageDetail {
  conversationId: number;
  messageId: number;
}

export interface NoticeDetail {
  message: string;
  kind: 'info' | 'error';
}

/** Dispatches a bubbling, composed CustomEvent from `el`. */
export function emit<K extends keyof SmEvents>(
  el: EventTarget,
  name: K,
  detail: SmEvents[K],
): void {
  el.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
}

export interface SmEvents {
  /** Select a node in the memory tree (from a tool card link, the map, search, the tree). */
  'sm-select-path': SelectPathDetail;
  /** The in-page model's kept GGUF changed (Settings); `name` is '' after Delete. */
  'sm-in-page-model': { name: string };
  /** The in-page model's file `name` was deleted (Settings): its engine must let it go. */
  'sm-in-page-model-deleted': { name: string };
  /** Show a message of a conversation (from a context chunk's source link). */
  'sm-open-message': OpenMessageDetail;
  /** Tell the user something (status line / toast). */
  'sm-notice': NoticeDetail;
  /** A dialog closed and what opened it is gone: the page puts the keyboard's focus. */
  'sm-focus-lost': Record<string, never>;
}

declare global {
  interface GlobalEventHandlersEventMap {
    'sm-select-path': CustomEvent<SelectPathDetail>;
    'sm-open-message': CustomEvent<OpenMessageDetail>;
    'sm-notice': CustomEvent<NoticeDetail>;
    'sm-in-page-model-deleted': CustomEvent<{ name: string }>;
    'sm-focus-lost': CustomEvent<Record<string, never>>;
  }
}
