// A short notice with one action (Undo) for a few seconds. Any component asks for one with
// `requestToast()`, a bubbling event; the component that renders <sm-toast> (the app, at the
// foot of the memory column) shows it.
import { deepActiveElement } from './focus';
import { LitElement, html, nothing } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { base, tokens } from './styles';
import { toastStyles } from './sm-toast.styles';

export interface ToastAction {
  /** The button's text, e.g. "Undo". */
  label: string;
  /** Runs the action; resolves to the notice to show next (or nothing). Errors are shown. */
  run: () => Promise<string | void>;
}

export interface ToastRequest {
  message: string;
  action?: ToastAction;
  /** Where focus goes when the notice closes with focus inside it (else it would fall to the page). */
  restoreFocus?: () => void;
}

/** How long a notice stays (ms) while not hovered or focused. */
export const TOAST_MS = 8000;
/** A notice without an action is read and gone sooner. */
const PLAIN_MS = 5000;

/** Asks the page's toast host to show `request` (see `sm-app`). */
export function requestToast(from: EventTarget, request: ToastRequest): void {
  from.dispatchEvent(
    new CustomEvent('sm-toast', { detail: request, bubbles: true, composed: true }),
  );
}

/**
 * `<sm-toast>`: one notice at a time, announced politely (`role="status"`), with its action and a
 * close button in the tab order. It stays `duration` ms, and not while the pointer or the focus
 * is on it; Escape closes it. When the control that caused it has gone (focus fell to the page),
 * the action takes the focus, so a keyboard user can still reach Undo.
 */
@customElement('sm-toast')
export class SmToast extends LitElement {
  static override styles = [tokens, base, toastStyles];

  /** How long a notice with an action stays, in ms. */
  @property({ type: Number }) duration = TOAST_MS;

  @state() private current: ToastRequest | undefined;
  @state() private busy = false;

  @query('button.action') private actionButton!: HTMLButtonElement | null;
  @query('button.close') private closeButton!: HTMLButtonElement | null;

  private timer: ReturnType<typeof setTimeout> | undefined;
  private held = { hover: false, focus: false };

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.timer);
  }

  /** Shows `request`, replacing the notice on screen. */
  show(request: ToastRequest): void {
    const hadFocus = this.held.focus;
    this.current = request;
    this.busy = false;
    this.arm();
    void this.updateComplete.then(() => {
      const lost = !deepActiveElement();
      if (request.action && lost) this.actionButton?.focus();
      // The button that had focus may be gone with the notice it belonged to.
      else if (hadFocus && lost) (this.actionButton ?? this.closeButton)?.focus();
    });
  }

  /** Closes the notice now. */
  close(): void {
    clearTimeout(this.timer);
    const closing = this.current;
    const hadFocus = this.held.focus;
    this.current = undefined;
    this.held = { hover: false, focus: false };
    if (hadFocus) closing?.restoreFocus?.();
  }

  override render() {
    const t = this.current;
    return html`<div
      class="toast ${t ? 'open' : ''}"
      @mouseenter=${() => this.hold('hover', true)}
      @mouseleave=${() => this.hold('hover', false)}
      @focusin=${() => this.hold('focus', true)}
      @focusout=${() => this.hold('focus', false)}
      @keydown=${this.handleKey}
    >
      <p role="status" aria-live="polite" aria-atomic="true">${t?.message ?? ''}</p>
      ${
        t?.action
          ? html`<button
              class="action"
              aria-disabled=${this.busy ? 'true' : 'false'}
              @click=${this.handleAction}
            >
              ${t.action.label}
            </button>`
          : nothing
      }
      ${
        t
          ? html`<button class="close" aria-label="Close notice" title="Close" @click=${this.close}>
              ×
            </button>`
          : nothing
      }
    </div>`;
  }

  private arm(): void {
    clearTimeout(this.timer);
    if (!this.current || this.held.hover || this.held.focus) return;
    const ms = this.current.action ? this.duration : Math.min(this.duration, PLAIN_MS);
    this.timer = setTimeout(() => this.close(), ms);
  }

  private hold(what: 'hover' | 'focus', on: boolean): void {
    this.held = { ...this.held, [what]: on };
    this.arm();
  }

  private handleKey(event: KeyboardEvent): void {
    if (event.key !== 'Escape') return;
    event.stopPropagation();
    this.close();
  }

  private async handleAction(): Promise<void> {
    const action = this.current?.action;
    if (!action || this.busy) return;
    this.busy = true;
    let next: string | void;
    try {
      next = await action.run();
    } catch (e) {
      next = `That did not work: ${e instanceof Error ? e.message : String(e)}`;
    }
    this.busy = false;
    const restore = this.current?.restoreFocus;
    // Done: focus goes back to the page's content first, so the outcome's notice is not held
    // open by a focus left on a button that no longer applies.
    if (this.held.focus) restore?.();
    if (next) this.show({ message: next, restoreFocus: restore });
    else this.close();
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-toast': SmToast;
  }
  interface GlobalEventHandlersEventMap {
    'sm-toast': CustomEvent<ToastRequest>;
  }
}
