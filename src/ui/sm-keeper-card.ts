// The memory keeper's card, under the reply whose exchange it kept (docs/chat.md, "Memory
// keeper"): what it saved or updated, each path a link into the memory tree, and Undo, which then
// says it is undone (and what it had to leave as it was). The panel does the undo; the card
// reports the click.
import { LitElement, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, query } from 'lit/decorators.js';
import type { KeeperCard } from '../chat/keeper-card';
import { emit } from './events';
import { base, card, tokens } from './styles';
import type { FollowPathDetail } from './sm-tool-card';
import { keeperCardStyles } from './sm-keeper-card.styles';

export interface KeeperUndoDetail {
  /** The card's message id. */
  id: number;
}

declare module './events' {
  interface SmEvents {
    /** Undo what a memory keeper card kept. */
    'sm-keeper-undo': KeeperUndoDetail;
  }
}

declare global {
  interface GlobalEventHandlersEventMap {
    'sm-keeper-undo': CustomEvent<KeeperUndoDetail>;
  }
}

/**
 * `<sm-keeper-card>`: what one memory keeper run kept, with Undo.
 *
 * @fires sm-keeper-undo - Undo was clicked (`{ id }`).
 * @fires sm-select-path - A path was clicked (`{ path, followMoves: true }`: where the entry is
 *   now, if it was moved since).
 */
@customElement('sm-keeper-card')
export class SmKeeperCard extends LitElement {
  static override styles = [tokens, base, card, keeperCardStyles];

  /** What the run kept, and whether it was undone (`meta.keeper` of the card's message). */
  @property({ attribute: false }) card?: KeeperCard;

  /** The card's message id (the undo event carries it). */
  @property({ type: Number }) messageId?: number;

  /** Undo is running. */
  @property({ type: Boolean }) undoing = false;

  @query('.state') private stateLine?: HTMLElement;

  /** Undo was pressed here: focus goes to what replaces the button. */
  private pressed = false;

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('card') && this.card?.undone && this.pressed) {
      this.pressed = false;
      this.stateLine?.focus();
    }
  }

  override render() {
    const card = this.card;
    if (!card) return nothing;
    const undone = card.undone;
    return html`<div
      class="card ${undone ? 'is-undone' : ''}"
      role="group"
      aria-label="Memory keeper"
    >
      <div class="head">
        <span class="title">Memory keeper</span>
        ${
          undone
            ? html`<span class="state" tabindex="-1"
                >${
                  undone.status === 'undone'
                    ? 'Undone'
                    : undone.nothing
                      ? 'Not undone'
                      : 'Partly undone'
                }</span
              >`
            : nothing
        }
        ${
          !undone || undone.left?.length
            ? html`<button
                type="button"
                class="undo"
                ?disabled=${this.undoing}
                @click=${this.handleUndo}
              >
                ${this.undoing ? 'Undoing…' : undone ? 'Undo the rest' : 'Undo'}
              </button>`
            : nothing
        }
      </div>
      <ul class="ops">
        ${card.ops.map(
          (op) =>
            html`<li>
              <span class="op"
                >${op.op === 'add' ? 'Saved' : 'Updated'}${
                  // Partly undone, the note says what was left; each line says what was done.
                  undone?.status === 'undone' ? ', then undone' : ''
                }</span
              >
              <button
                type="button"
                class="path"
                title="Show in the memory tree"
                @click=${() => this.handleSelect(op.path)}
              >
                ${op.path}
              </button>
              ${op.content ? html`<span class="content">${op.content}</span>` : nothing}
            </li>`,
        )}
      </ul>
      ${undone?.message ? html`<p class="left" role="note">${undone.message}</p>` : nothing}
    </div>`;
  }

  private handleUndo(): void {
    const undone = this.card?.undone;
    if (this.messageId === undefined || this.undoing || (undone && !undone.left?.length)) return;
    this.pressed = true;
    emit(this, 'sm-keeper-undo', { id: this.messageId });
  }

  private handleSelect(path: string): void {
    const detail: FollowPathDetail = { path, followMoves: true };
    emit(this, 'sm-select-path', detail);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-keeper-card': SmKeeperCard;
  }
}
