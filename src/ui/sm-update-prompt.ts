// The "new version" banner: registers the service worker and, when a new version of the app is
// installed and waiting, offers to reload into it. Invisible the rest of the time.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { registerServiceWorker, type PwaRegistration } from '../pwa';
import { emit } from './events';
import { base, tokens } from './styles';

/**
 * `<sm-update-prompt>`: registers the app's service worker on first connection and shows a
 * small fixed banner, "A new version is available" with "Reload to update", while a new version
 * waits (Escape inside it is "Later"). Renders nothing otherwise. Put one in the app shell.
 *
 * @cssproperty --sm-update-prompt-bottom - Distance from the bottom of the viewport (default
 *   16px; 12px on a phone): raise it to keep a composer or tab bar clear.
 * @cssproperty --sm-update-prompt-right - Distance from the right edge (default 16px).
 *
 * @fires sm-notice - Once, when the app has been installed for offline use; and when the
 *   service worker fails to register.
 */
@customElement('sm-update-prompt')
export class SmUpdatePrompt extends LitElement {
  static override styles = [
    tokens,
    base,
    css`
      :host {
        position: fixed;
        z-index: 1000;
        right: var(--sm-update-prompt-right, 16px);
        bottom: var(--sm-update-prompt-bottom, 16px);
        max-width: calc(100vw - 32px);
      }
      .banner {
        display: flex;
        align-items: center;
        gap: 8px 16px;
        padding: 10px 10px 10px 14px;
        background: var(--sm-surface);
        border: 1px solid var(--sm-border);
        border-left: 4px solid var(--sm-accent);
        border-radius: var(--sm-radius);
        box-shadow: 0 4px 16px rgb(29 36 48 / 0.16);
        font-size: 0.9rem;
        line-height: 1.35;
      }
      p {
        margin: 0;
      }
      .actions {
        display: flex;
        gap: 6px;
        margin-left: auto;
      }
      button {
        padding: 5px 10px;
        white-space: nowrap;
      }
      button.later {
        border-color: transparent;
        background: transparent;
        color: var(--sm-muted);
      }
      @media (max-width: 480px) {
        :host {
          left: 12px;
          right: 12px;
          bottom: var(--sm-update-prompt-bottom, 12px);
          max-width: none;
        }
        .banner {
          flex-wrap: wrap;
        }
        p {
          flex: 1 1 12rem;
        }
      }
    `,
  ];

  /**
   * Whether a new version waits (the banner shows). Set by the element itself; settable by hand
   * for previews.
   */
  @property({ type: Boolean, reflect: true }) available = false;

  /** Don't register the service worker (previews and tests that fake `available`). */
  @property({ type: Boolean, attribute: 'no-register' }) noRegister = false;

  @state() private updating = false;

  private registration: PwaRegistration | undefined;

  override connectedCallback(): void {
    super.connectedCallback();
    // Once per element: the registration outlives a move in the DOM.
    if (this.registration || this.noRegister) return;
    this.registration = registerServiceWorker({
      onNeedRefresh: () => {
        this.updating = false;
        this.available = true;
      },
      onOfflineReady: () =>
        emit(this, 'sm-notice', {
          kind: 'info',
          message: 'Structured Memory is ready to work offline.',
        }),
      onError: (message) => emit(this, 'sm-notice', { kind: 'error', message }),
    });
  }

  override render() {
    // The live region stays in the page, so the banner is announced when it appears.
    return html`<div role="status">${this.available ? this.renderBanner() : nothing}</div>`;
  }

  private renderBanner() {
    return html`
      <div class="banner" @keydown=${this.handleKeyDown}>
        <p>A new version is available.</p>
        <div class="actions">
          <button type="button" class="later" ?disabled=${this.updating} @click=${this.handleLater}>
            Later
          </button>
          <button
            type="button"
            class="primary"
            ?disabled=${this.updating}
            @click=${this.handleUpdate}
          >
            ${this.updating ? 'Updating…' : 'Reload to update'}
          </button>
        </div>
      </div>
    `;
  }

  /** Escape, with focus in the banner, is "Later". */
  private handleKeyDown(e: KeyboardEvent): void {
    if (e.key !== 'Escape' || this.updating) return;
    e.preventDefault();
    this.handleLater();
  }

  private handleLater(): void {
    // Until the next page load (or the next new version); the old version keeps working.
    this.available = false;
  }

  private async handleUpdate(): Promise<void> {
    this.updating = true;
    if (this.registration) await this.registration.update();
    else window.location.reload();
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-update-prompt': SmUpdatePrompt;
  }
}
