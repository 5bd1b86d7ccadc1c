// The explorer's Trash: deleted entries and subtrees (a recursive delete is one item), newest
// first, each restorable whole with its history and context; "Empty trash" behind a confirmation.
import { LitElement, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import type { JsonValue, RestoreDeletedResult, TrashItem } from '../memory/types';
import type { MemoryClient } from '../worker-client';
import { previewText } from './diff';
import { emit } from './events';
import { MemoryWatch } from './memory-watch';
import { requestToast } from './sm-toast';
import { base, tokens } from './styles';
import { describeAge } from './tree-model';
import { trashStyles } from './sm-trash.styles';

/** Paths shown under a subtree item before "…and N more". */
const PATHS_SHOWN = 8;

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

function preview(content: JsonValue): string {
  return previewText(content).slice(0, 160);
}

/** “Trip” or “Trip” (3 entries). */
function named(path: string, entries: number): string {
  return entries === 1 ? `“${path}”` : `“${path}” (${plural(entries, 'entry', 'entries')})`;
}

/**
 * `<sm-trash>`: what was deleted and can come back.
 *
 * Reads `listTrash()` while `active` (the Trash tab is shown), again on every change to memory.
 * Restore brings an item back in one transaction and offers Undo in a toast; "Empty trash" asks
 * first (focus on Cancel, Escape closes) and then removes every stored version of those paths.
 *
 * @fires sm-select-path - An item's path was chosen, or an item was restored (its path).
 * @fires sm-toast - After a restore (with Undo) or emptying the trash.
 */
@customElement('sm-trash')
export class SmTrash extends LitElement {
  static override styles = [tokens, base, trashStyles];

  /** The memory engine (worker proxy). */
  @property({ attribute: false }) memory: MemoryClient | undefined;
  /** The Trash is on screen: only then is it read (every save writes history). */
  @property({ type: Boolean }) active = false;
  /** The explorer's path filter: items whose paths contain it. */
  @property() filter = '';

  /** The item being restored, or the whole trash being emptied. */
  @state() private busy: number | 'empty' | undefined;
  @state() private error = '';

  @query('dialog') private dialog!: HTMLDialogElement;
  @query('.open-confirm') private emptyButton!: HTMLButtonElement;

  private readonly watch = new MemoryWatch<TrashItem[] | undefined>(this, {
    tables: ['structured_memory', 'history'],
    load: () => this.load(),
  });

  protected override willUpdate(changed: PropertyValues<this>): void {
    if ((changed.has('memory') || changed.has('active')) && this.active) void this.watch.reload();
  }

  private async load(): Promise<TrashItem[] | undefined> {
    if (!this.memory || !this.active) return this.watch.value;
    const r = await this.memory.listTrash();
    if (r.status !== 'SUCCESS') throw new Error(r.message);
    return r.items;
  }

  override render() {
    const all = this.watch.value;
    if (!all) {
      return this.watch.error
        ? html`<p role="alert">The trash could not be read: ${String(this.watch.error)}</p>`
        : html`<p class="empty">Loading the trash…</p>`;
    }
    const items = this.filtered(all);
    const entries = all.reduce((n, i) => n + i.entries, 0);
    return html`<div class="head">
        <p class="summary" tabindex="-1" aria-live="polite">
          ${
            all.length
              ? `${plural(all.length, 'deleted item')} · ${plural(entries, 'entry', 'entries')}`
              : 'Nothing deleted'
          }
        </p>
        <button
          class="small danger open-confirm"
          ?disabled=${!all.length || this.busy !== undefined}
          @click=${this.handleConfirm}
        >
          Empty trash
        </button>
      </div>
      ${this.error ? html`<p role="alert">${this.error}</p>` : nothing}
      ${
        items.length
          ? html`<ul class="list" aria-label="Deleted entries">
              ${items.map((item) => this.renderItem(item))}
            </ul>`
          : html`<p class="empty">
              ${
                all.length
                  ? `No deleted path contains “${this.filter.trim()}”.`
                  : 'The trash is empty. Deleted entries and subtrees stay here, with their history, until the trash is emptied.'
              }
            </p>`
      }
      ${this.renderDialog(all.length, entries)}`;
  }

  private renderItem(item: TrashItem) {
    const now = Date.now();
    const more = item.entries - Math.min(item.paths.length, PATHS_SHOWN);
    return html`<li>
      <div class="main">
        <button
          class="path"
          title="Show “${item.path}” and its history"
          @click=${() => this.select(item.path)}
        >
          ${item.path}
        </button>
        <span class="meta">
          ${item.entries > 1 ? `${plural(item.entries, 'entry', 'entries')} · ` : ''}deleted
          <time datetime=${item.deleted.toISOString()} title=${dateFormat.format(item.deleted)}
            >${describeAge(item.deleted.getTime(), now)}</time
          >${item.chunks ? ` · ${plural(item.chunks, 'context chunk')}` : ''}
        </span>
        ${
          item.entries > 1
            ? html`<details>
                <summary>Show the entries</summary>
                <ul>
                  ${item.paths.slice(0, PATHS_SHOWN).map((p) => html`<li>${p}</li>`)}
                </ul>
                ${more > 0 ? html`<span class="meta">…and ${more} more</span>` : nothing}
              </details>`
            : html`<span class="preview">${preview(item.content)}</span>`
        }
      </div>
      <button
        class="small"
        aria-label="Restore ${item.path}"
        ?disabled=${this.busy !== undefined}
        @click=${() => this.handleRestore(item)}
      >
        Restore
      </button>
    </li>`;
  }

  private renderDialog(items: number, entries: number) {
    return html`<dialog
      aria-labelledby="confirm-title"
      aria-describedby="confirm-text"
      @close=${this.handleDialogClose}
    >
      <h2 id="confirm-title">Empty the trash?</h2>
      <p id="confirm-text">
        ${
          items === entries
            ? plural(entries, 'deleted entry', 'deleted entries')
            : `${plural(items, 'deleted item')} (${plural(entries, 'entry', 'entries')})`
        }
        and every stored version of ${entries === 1 ? 'it' : 'them'} will be removed for good. This
        cannot be undone.
      </p>
      <div class="actions">
        <button class="cancel" @click=${() => this.dialog.close()}>Cancel</button>
        <button class="danger" ?disabled=${this.busy !== undefined} @click=${this.handleEmpty}>
          Empty trash
        </button>
      </div>
    </dialog>`;
  }

  private filtered(items: TrashItem[]): TrashItem[] {
    const f = this.filter.trim().toLowerCase();
    if (!f) return items;
    return items.filter(
      (i) => i.path.toLowerCase().includes(f) || i.paths.some((p) => p.toLowerCase().includes(f)),
    );
  }

  private select(path: string): void {
    emit(this, 'sm-select-path', { path });
  }

  /** Keyboard focus for after a notice closes: the list's first button, else Empty trash. */
  private focusList(): void {
    this.renderRoot.querySelector<HTMLElement>('.list button, .open-confirm')?.focus();
  }

  private handleConfirm(): void {
    this.error = '';
    this.dialog.showModal();
    // Safe choice first: Enter right away cancels.
    this.renderRoot.querySelector<HTMLButtonElement>('dialog .cancel')?.focus();
  }

  private handleDialogClose(): void {
    // Back to the button that opened it, or (the trash now empty) to the summary beside it.
    if (this.emptyButton && !this.emptyButton.disabled && this.busy === undefined)
      this.emptyButton.focus();
    else this.renderRoot.querySelector<HTMLElement>('.summary')?.focus();
  }

  private async handleEmpty(): Promise<void> {
    const memory = this.memory;
    if (!memory || this.busy !== undefined) return;
    this.busy = 'empty';
    try {
      const r = await memory.emptyTrash();
      this.dialog.close();
      if (r.status !== 'SUCCESS') {
        this.error = r.message;
        return;
      }
      requestToast(this, {
        message: `Emptied the trash: ${plural(r.entries, 'entry', 'entries')} deleted for good.`,
      });
      await this.watch.reload();
    } catch (e) {
      this.dialog.close();
      this.error = `The memory worker did not answer: ${e instanceof Error ? e.message : String(e)}. Reload the page and try again.`;
    } finally {
      this.busy = undefined;
    }
  }

  private async handleRestore(item: TrashItem): Promise<void> {
    const memory = this.memory;
    if (!memory || this.busy !== undefined) return;
    this.busy = item.id;
    this.error = '';
    try {
      const r = await memory.restoreDeleted(item.id);
      if (r.status !== 'SUCCESS') {
        this.error = r.message;
        return;
      }
      await this.watch.reload();
      requestToast(this, {
        message: `Restored ${named(r.path, r.restored)}.`,
        action: { label: 'Undo', run: () => this.undoRestore(memory, r) },
        restoreFocus: () => this.focusList(),
      });
      this.select(r.path);
    } catch (e) {
      this.error = `The memory worker did not answer: ${e instanceof Error ? e.message : String(e)}. Reload the page and try again.`;
    } finally {
      this.busy = undefined;
    }
  }

  /** Deletes again what the restore brought back, if nothing else was saved there since. */
  private async undoRestore(memory: MemoryClient, r: RestoreDeletedResult): Promise<string> {
    const prefix = `${r.path}/`;
    const live = (await memory.memoryIndex())
      .map((e) => e.path)
      .filter((p) => p === r.path || p.startsWith(prefix))
      .sort();
    if (live.length !== r.paths.length || live.some((p, i) => p !== r.paths[i])) {
      return `Not undone: entries at “${r.path}” changed since. Delete them from the tree if you want.`;
    }
    const d = await memory.deleteMemory(r.path, true);
    if (d.status !== 'SUCCESS') return `Not undone: ${d.message}`;
    return `${named(r.path, d.deleted)} is back in the trash.`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-trash': SmTrash;
  }
}
