// The detail pane of the memory explorer: one entry (content, context chunks, metadata, history)
// or one heading (its children), with edit, move, delete and restore through the worker, each
// undoable from a toast.
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { ChunkView, HeadingChild, JsonValue } from '../memory/types';
import type { MemoryClient } from '../worker-client';
import {
  contentText,
  diffContent,
  diffStats,
  isJsonObject,
  planSave,
  previewText,
  type ContentFormat,
} from './diff';
import { emit, type OpenMessageDetail } from './events';
import { MemoryWatch } from './memory-watch';
import {
  CHILD_LIMIT,
  detailOf,
  patchDetail,
  type Detail,
  type HistoryVersion,
  type Loaded,
} from './entry-detail-model';
import { requestToast } from './sm-toast';
import { base, tokens } from './styles';
import { entryDetailStyles } from './sm-entry-detail.styles';

type Mode = 'view' | 'edit' | 'move' | 'delete';

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

// Worded so no history row's name contains an action's name (Edit, Move, Delete, Restore…).
const REASONS: Record<HistoryVersion['reason'], string> = {
  update: 'changed',
  delete: 'removed',
  move: 'renamed',
  restore: 'rolled back',
  import: 'overwritten by a file',
};

function ago(date: Date, now: number): string {
  const seconds = (date.getTime() - now) / 1000;
  const steps: [Intl.RelativeTimeFormatUnit, number][] = [
    ['year', 31_536_000],
    ['month', 2_592_000],
    ['week', 604_800],
    ['day', 86_400],
    ['hour', 3600],
    ['minute', 60],
  ];
  for (const [unit, size] of steps) {
    if (Math.abs(seconds) >= size) return relativeFormat.format(Math.round(seconds / size), unit);
  }
  return 'just now';
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** “A/B” or “A/B” (3 entries), for notices. */
function named(path: string, entries: number): string {
  return entries === 1 ? `“${path}”` : `“${path}” (${plural(entries, 'entry', 'entries')})`;
}

/** One line of a content, for lists. */
function preview(content: JsonValue): string {
  return previewText(content).slice(0, 160);
}

function segmentsOf(path: string): string[] {
  return path === '' ? [] : path.split('/');
}

function isHeadingChild(c: HeadingChild): c is Extract<HeadingChild, { isHeading: true }> {
  return 'isHeading' in c && c.isHeading === true;
}

/**
 * Where a context chunk came from: its message (`turn_id`) and that message's conversation, as
 * `entryDetail` found it. A chunk whose message is gone (its conversation deleted) has none.
 */
function sourceOf(
  chunk: ChunkView,
  sources: Record<number, number> | undefined,
): OpenMessageDetail | undefined {
  const turn = (chunk as ChunkView & { turn_id?: unknown }).turn_id;
  if (typeof turn !== 'number') return undefined;
  const conversationId = sources?.[turn];
  return conversationId === undefined ? undefined : { messageId: turn, conversationId };
}

/**
 * `<sm-entry-detail>`: everything about one memory path.
 *
 * An entry shows its breadcrumb, content (pretty JSON, or text), metadata, context chunks and
 * history (a line diff against the current content, and Restore). Edit, Move and Delete work
 * inline; every change goes through the worker and the pane reloads from the database, so a
 * change made in another tab shows here too. A heading shows its children and a recursive
 * Delete. A path with nothing saved shows its history, so a deleted entry can be restored.
 *
 * Edits keep the context chunks (the conversation that explains the entry): when the old and
 * new contents are both objects, the change is saved as a JSON merge patch (`updateMemory`, which
 * applies it on top of a concurrent change); anything else replaces the content with
 * `editMemory`. The context section then says it was kept from the original save.
 *
 * Delete, Move and Restore offer Undo in a toast (`sm-toast`, shown by the explorer). A moved
 * entry says where it came from; the old path says where it went, with a link.
 *
 * In a flex column it takes the height left (the explorer above sets its own) and scrolls by
 * itself, back to the top for each new path. The edit, move and delete forms close with Escape
 * (focus back on the button that opened them); the delete confirmation starts on Cancel; the
 * edit form's Save and Cancel stay in view at the foot of the pane while the content scrolls.
 *
 * @fires sm-select-path - A breadcrumb segment or a child was chosen, or the entry was moved.
 * @fires sm-open-message - A context chunk's Source link: its conversation and message ids.
 * @fires sm-toast - After a delete, move or restore: what happened, with Undo.
 */
@customElement('sm-entry-detail')
export class SmEntryDetail extends LitElement {
  static override styles = [tokens, base, entryDetailStyles];

  /** The memory engine (the worker proxy). */
  @property({ attribute: false }) memory: MemoryClient | undefined;

  /** The selected path: an entry, a heading, or '' for the root; undefined shows a hint. */
  @property() path: string | undefined;

  @state() private mode: Mode = 'view';
  @state() private draft = '';
  @state() private format: ContentFormat = 'json';
  /** Content and version the edit started from. */
  @state() private editBase: { content: JsonValue; version: number } | undefined;
  @state() private moveTo = '';
  @state() private actionError = '';
  @state() private busy = false;
  @state() private selectedVersion: number | undefined;
  @state() private status = '';
  /** Focus goes into this pane once it shows its path (`focusMain`). */
  private wantsFocus = false;
  /** The version the status note speaks of: a change made elsewhere since (a delete, a save) ends it. */
  private statusVersion?: number;
  /** Paths removed by the last delete here, offered as links to their history. */
  @state() private deleted: string[] = [];
  /** The toolbar button that opened the form shown, to take the focus back when it closes. */
  private opener: 'edit' | 'move' | 'delete' | undefined;
  /** While editing: the pane's size changes refit the content box. */
  private readonly resized = new ResizeObserver(() => {
    if (this.mode === 'edit') this.fitEditor();
  });

  private readonly watch = new MemoryWatch<Detail | undefined>(this, {
    tables: ['structured_memory', 'history'],
    load: () => this.load(),
    // The report of a write that touched this path carries the detail as it is now.
    patch: patchDetail,
    patchOnReport: true,
  });

  override connectedCallback(): void {
    super.connectedCallback();
    this.addEventListener('keydown', this.handleEscape);
    this.resized.observe(this);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.removeEventListener('keydown', this.handleEscape);
    this.resized.disconnect();
    // No longer shown: the worker need not read this path into its change reports.
    const { memory, path } = this;
    if (memory && path !== undefined) void memory.unwatchDetail(path).catch(() => undefined);
  }

  /**
   * Caps the content box so the whole edit form, Save included, fits the pane's visible height
   * (the box scrolls inside instead); Save also sticks to the pane's foot if even that is short.
   */
  private fitEditor(): void {
    const area = this.renderRoot.querySelector<HTMLTextAreaElement>('form.edit textarea');
    const form = area?.closest('form');
    if (!area || !form) return;
    area.style.removeProperty('max-height');
    const pane = this.getBoundingClientRect();
    const box = area.getBoundingClientRect();
    const under = form.getBoundingClientRect().bottom - box.bottom;
    // To 8px above the pane's foot, where the sticky Save would otherwise rest over the box.
    const room = pane.top + this.clientTop + this.clientHeight - 8 - box.top - under;
    area.style.maxHeight = `${Math.max(96, Math.floor(room))}px`;
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('path') || changed.has('memory')) {
      if (changed.has('path')) this.resetUi();
      void this.watch.reload();
    }
  }

  protected override updated(changed: PropertyValues<this>): void {
    // A new path starts at its top, not where the last one was scrolled to.
    if (changed.has('path')) this.scrollTop = 0;
    // Focus asked for (a toast's Undo done), given once the pane shows the path it is at now:
    // an Undo of a move selects the path moved back, and that detail loads after the Undo.
    if (this.wantsFocus && this.watch.value?.path === this.path) {
      const target = this.renderRoot.querySelector<HTMLElement>('.toolbar button, h2');
      if (target) {
        this.wantsFocus = false;
        target.focus();
      }
    }
  }

  /** Escape closes the edit, move or delete form, as Cancel does. */
  private readonly handleEscape = (event: KeyboardEvent): void => {
    if (event.key !== 'Escape' || this.mode === 'view' || event.defaultPrevented) return;
    event.preventDefault();
    event.stopPropagation();
    this.handleCancel();
  };

  private resetUi(): void {
    this.mode = 'view';
    this.actionError = '';
    this.selectedVersion = undefined;
    this.status = '';
    this.statusVersion = undefined;
    this.editBase = undefined;
    this.busy = false;
    this.deleted = [];
  }

  /** Reads the path in one call: the entry (if any), its history and what lies below it. */
  private async load(): Promise<Detail | undefined> {
    const { memory, path } = this;
    if (!memory || path === undefined) return undefined;
    // `watch`: the worker reads this detail into the change reports that touch it, from now on.
    const detail = await memory.entryDetail(path, { childLimit: CHILD_LIMIT, watch: true });
    return detailOf(path, detail);
  }

  private select(path: string): void {
    emit(this, 'sm-select-path', { path });
  }

  override render() {
    if (this.path === undefined) {
      return html`<p class="empty">Select an entry or heading to see it here.</p>`;
    }
    const detail = this.watch.value;
    if (this.watch.error) {
      return html`${this.renderCrumbs(this.path)}
        <p role="alert">Could not read “${this.path}”: ${String(this.watch.error)}</p>`;
    }
    if (!detail || detail.path !== this.path) {
      return html`${this.renderCrumbs(this.path)}
        <p class="empty">Loading…</p>`;
    }
    if (detail.kind === 'error') {
      return html`${this.renderCrumbs(detail.path)}
        <p role="alert">${detail.message}</p>`;
    }
    const title = detail.path === '' ? 'Memory' : segmentsOf(detail.path).at(-1);
    const kind =
      detail.kind === 'entry'
        ? `entry · v${detail.entry.metadata.version}`
        : detail.kind === 'heading'
          ? 'heading'
          : 'nothing saved';
    // Said as words, apart from the title: the text alone reads "PreferDarkentry · v1".
    const spoken = `${title}, ${
      detail.kind === 'entry' ? `entry, version ${detail.entry.metadata.version}` : kind
    }`;
    const heading = html`${title} <span class="kind">${kind}</span>`;
    return html`
      ${this.renderCrumbs(detail.path)}
      <header>
        <h2 tabindex="-1" aria-label=${spoken}>${heading}</h2>
        ${this.mode === 'view' ? this.renderToolbar(detail) : nothing}
      </header>
      <p class="status" role="status">${this.statusNow(detail)}</p>
      ${this.mode === 'edit' && detail.kind === 'entry' ? this.renderEdit(detail) : nothing}
      ${this.mode === 'move' ? this.renderMove(detail) : nothing}
      ${this.mode === 'delete' ? this.renderDelete(detail) : nothing}
      ${detail.kind === 'entry' ? this.renderEntry(detail) : nothing}
      ${detail.kind === 'missing' ? this.renderMissing(detail) : nothing}
      ${
        detail.kind === 'missing' && this.deleted.some((p) => p !== detail.path)
          ? this.renderDeleted(detail.path)
          : nothing
      }
      ${detail.kind !== 'missing' && detail.descendants > 0 ? this.renderChildren(detail) : nothing}
      ${
        detail.kind === 'heading' && detail.descendants === 0
          ? html`<p class="empty">Memory is empty: nothing has been saved yet.</p>`
          : nothing
      }
      ${detail.history.length ? this.renderHistory(detail) : nothing}
    `;
  }

  private renderMissing(detail: Extract<Detail, { kind: 'missing' }>) {
    const { moved } = detail;
    if (moved) {
      return html`<p class="empty">
        Nothing is saved at “${detail.path}”. It was moved to
        <button class="link inline" @click=${() => this.select(moved.to)}>${moved.to}</button
        >${moved.live ? '.' : ', where nothing is saved now either.'}
      </p>`;
    }
    return html`<p class="empty">
      Nothing is saved at “${detail.path}”.
      ${
        detail.history.length
          ? 'It was deleted: restore it from the Trash, or an earlier version below.'
          : ''
      }
    </p>`;
  }

  private renderCrumbs(path: string): TemplateResult {
    const segs = segmentsOf(path);
    return html`<nav class="crumbs" aria-label="Breadcrumb">
      <ol>
        <li>
          ${
            segs.length
              ? html`<button class="link" @click=${() => this.select('')}>Memory</button>`
              : html`<span aria-current="page">Memory</span>`
          }
        </li>
        ${segs.map((seg, i) => {
          const target = segs.slice(0, i + 1).join('/');
          return html`<li>
            ${
              i === segs.length - 1
                ? html`<span aria-current="page">${seg}</span>`
                : html`<button class="link" @click=${() => this.select(target)}>${seg}</button>`
            }
          </li>`;
        })}
      </ol>
    </nav>`;
  }

  private renderToolbar(detail: Exclude<Detail, { kind: 'error' }>) {
    if (detail.kind === 'missing' || detail.path === '') return nothing;
    return html`<div class="toolbar" role="toolbar" aria-label="Entry actions">
      ${
        detail.kind === 'entry'
          ? html`<button data-opens="edit" @click=${this.handleEdit}>Edit</button>`
          : nothing
      }
      <button data-opens="move" @click=${this.handleMoveStart}>Move</button>
      <button data-opens="delete" class="danger" @click=${this.handleDeleteStart}>Delete</button>
    </div>`;
  }

  private renderEntry(detail: Extract<Detail, { kind: 'entry' }>) {
    const { entry } = detail;
    const now = Date.now();
    const date = (d: Date) =>
      html`<time datetime=${d.toISOString()}>${dateFormat.format(d)}</time>
        <span class="muted">· ${ago(d, now)}</span>`;
    return html`
      ${
        this.mode === 'edit'
          ? nothing
          : html`<section>
              <h3>Content</h3>
              ${
                typeof entry.content === 'string'
                  ? html`<pre class="content text" dir="auto">${entry.content}</pre>`
                  : html`<pre class="content">${contentText(entry.content)}</pre>`
              }
            </section>`
      }
      <section>
        <h3>Details</h3>
        <dl class="meta">
          <dt>Version</dt>
          <dd>${entry.metadata.version}</dd>
          <dt>Created</dt>
          <dd>${date(entry.metadata.created)}</dd>
          <dt>Modified</dt>
          <dd>${date(entry.metadata.modified)}</dd>
          <dt>Accessed</dt>
          <dd>${date(entry.metadata.accessed)}</dd>
          ${
            detail.movedFrom !== undefined
              ? html`<dt>Moved from</dt>
                  <dd>
                    <button
                      class="link inline"
                      title="What is at the old path now"
                      @click=${() => this.select(detail.movedFrom!)}
                    >
                      ${detail.movedFrom}
                    </button>
                  </dd>`
              : nothing
          }
        </dl>
      </section>
      <section>
        <h3>Context from the conversation (${entry.contextChunks.length})</h3>
        ${
          entry.contextChunks.length && detail.contextVersion !== undefined
            ? html`<p class="kept">
                Kept from the original save (version ${detail.contextVersion}); later edits, moves
                and restores keep it.
              </p>`
            : nothing
        }
        ${
          entry.contextChunks.length
            ? html`<ul class="plain chunks">
                ${entry.contextChunks.map((c) => this.renderChunk(c, detail.sources))}
              </ul>`
            : html`<p class="empty">No conversation context was stored with this entry.</p>`
        }
      </section>
    `;
  }

  private renderChunk(chunk: ChunkView, sources: Record<number, number>) {
    const source = sourceOf(chunk, sources);
    const pct = Math.round(chunk.similarity * 100);
    return html`<li>
      <div class="chunk-head">
        <span class="role">${chunk.role}</span>
        <span title="Similarity to the entry when it was saved">${pct}% similar</span>
        ${
          source
            ? html`<button
                class="link"
                aria-label="Source message"
                @click=${() => emit(this, 'sm-open-message', source)}
              >
                source
              </button>`
            : nothing
        }
      </div>
      <p class="chunk-text">${chunk.text}</p>
    </li>`;
  }

  private renderChildren(detail: Loaded) {
    const more = detail.totalChildren - detail.children.length;
    return html`<section>
      <h3>
        ${plural(detail.totalChildren, 'child', 'children')} ·
        ${plural(detail.descendants, 'entry', 'entries')} below
      </h3>
      <ul class="plain children">
        ${detail.children.map((c) => {
          const heading = isHeadingChild(c);
          return html`<li>
            <button class="row" @click=${() => this.select(c.path)}>
              <span class="name">${c.heading}${heading ? '/' : ''}</span>
              ${
                heading
                  ? html`<span class="preview">${plural(c.descendants, 'entry', 'entries')}</span>`
                  : html`<span class="preview">${preview(c.content)}</span>`
              }
              <span class="aside">${ago(c.modified, Date.now())}</span>
            </button>
          </li>`;
        })}
      </ul>
      ${more > 0 ? html`<p class="empty">…and ${more} more.</p>` : nothing}
    </section>`;
  }

  private renderDeleted(path: string) {
    const shown = this.deleted.filter((p) => p !== path).slice(0, 50);
    const more = this.deleted.length - shown.length - (this.deleted.includes(path) ? 1 : 0);
    return html`<section>
      <h3>Deleted just now</h3>
      <p class="empty">
        They are in the Trash, to restore all at once; each keeps its history, so one can also be
        opened and restored alone.
      </p>
      <ul class="plain children">
        ${shown.map(
          (p) =>
            html`<li>
              <button class="row" @click=${() => this.select(p)}>
                <span class="name">${p}</span>
              </button>
            </li>`,
        )}
      </ul>
      ${more > 0 ? html`<p class="empty">…and ${more} more.</p>` : nothing}
    </section>`;
  }

  private renderHistory(detail: Exclude<Detail, { kind: 'error' }>) {
    const now = Date.now();
    return html`<section>
      <h3>History (${detail.history.length})</h3>
      <ul class="plain history">
        ${detail.history.map((v) => {
          const selected = v.id === this.selectedVersion;
          return html`<li>
            <button
              class="row"
              aria-pressed=${selected ? 'true' : 'false'}
              @click=${() => this.handleSelectVersion(v.id)}
            >
              <span class="name">Version ${v.version}</span>
              ${
                v.conflictFrom !== undefined
                  ? html`<span
                      class="preview"
                      title="Two devices changed this entry while apart; the later change is the live one, and this version, from ${v.conflictFrom}, is kept here."
                      >conflict, from ${v.conflictFrom}</span
                    >`
                  : html`<span class="preview"
                      >${REASONS[v.reason]}${v.movedTo !== undefined ? ` to ${v.movedTo}` : ''}</span
                    >`
              }
              <span class="aside" title=${dateFormat.format(v.replaced)}>
                ${ago(v.replaced, now)}
              </span>
            </button>
            ${selected ? this.renderVersion(detail, v) : nothing}
          </li>`;
        })}
      </ul>
    </section>`;
  }

  private renderVersion(detail: Exclude<Detail, { kind: 'error' }>, v: HistoryVersion) {
    const current = detail.kind === 'entry' ? detail.entry : undefined;
    const lines = current ? diffContent(v.content, current.content) : undefined;
    const stats = lines ? diffStats(lines) : undefined;
    return html`<div class="version-detail">
      <div class="bar">
        <span>
          ${
            current
              ? stats && (stats.added || stats.removed)
                ? html`Changes from version ${v.version} to the current one:
                    <span class="muted">−${stats.removed} +${stats.added} lines</span>`
                : html`Same content as the current version.`
              : html`Content of version ${v.version}:`
          }
        </span>
        <button class="small primary" ?disabled=${this.busy} @click=${() => this.handleRestore(v)}>
          Restore
        </button>
      </div>
      ${
        lines
          ? html`<pre
              class="diff"
              aria-label="Line diff: lines starting with - are only in version ${v.version}, lines with + only in the current version"
            >
${lines.map(
                (l) =>
                  html`<span class=${l.op === '+' ? 'add' : l.op === '-' ? 'del' : ''}
                    >${l.op === '+' ? '+ ' : l.op === '-' ? '- ' : '  '}${l.text}</span
                  >`,
              )}</pre>`
          : html`<pre class="diff">
${contentText(v.content)
                .split('\n')
                .map((t) => html`<span>${t}</span>`)}</pre>`
      }
      ${this.actionError ? html`<p role="alert">${this.actionError}</p>` : nothing}
    </div>`;
  }

  private renderEdit(detail: Extract<Detail, { kind: 'entry' }>) {
    const chunks = detail.entry.contextChunks.length;
    const rows = Math.min(24, Math.max(6, this.draft.split('\n').length + 1));
    const changedElsewhere =
      this.editBase !== undefined && this.editBase.version !== detail.entry.metadata.version;
    return html`<form class="panel edit" @submit=${this.handleSave} aria-label="Edit entry">
      <div class="edit-head">
        <label for="content-input">Content</label>
        <fieldset>
          <legend>Format:</legend>
          <label
            ><input
              type="radio"
              name="format"
              value="json"
              .checked=${this.format === 'json'}
              @change=${() => this.handleFormat('json')}
            />JSON</label
          >
          <label
            ><input
              type="radio"
              name="format"
              value="text"
              .checked=${this.format === 'text'}
              @change=${() => this.handleFormat('text')}
            />Text</label
          >
        </fieldset>
      </div>
      <textarea
        id="content-input"
        spellcheck="false"
        rows=${rows}
        .value=${this.draft}
        @input=${this.handleDraftInput}
      ></textarea>
      ${
        chunks > 0
          ? html`<p class="muted">
              The ${plural(chunks, 'context chunk')} from the conversation stay with the entry; the
              current version stays in history.
            </p>`
          : nothing
      }
      ${
        changedElsewhere
          ? html`<p class="warn">
              This entry changed while you were editing (now version
              ${detail.entry.metadata.version}).
              ${
                this.format === 'json' && isJsonObject(this.editBase?.content)
                  ? 'Saving applies your changes on top of it.'
                  : 'Saving replaces it with your text; the version there now goes to History.'
              }
            </p>`
          : nothing
      }
      ${this.actionError ? html`<p role="alert">${this.actionError}</p>` : nothing}
      <div class="actions">
        <button type="submit" class="primary" ?disabled=${this.busy}>Save</button>
        <button type="button" @click=${this.handleCancel}>Cancel</button>
      </div>
    </form>`;
  }

  private renderMove(detail: Exclude<Detail, { kind: 'error' }>) {
    const count = (detail.kind === 'entry' ? 1 : 0) + detail.descendants;
    return html`<form class="panel" @submit=${this.handleMove} aria-label="Move or rename">
      <label for="move-input">New path</label>
      <input
        id="move-input"
        type="text"
        spellcheck="false"
        autocomplete="off"
        .value=${this.moveTo}
        @input=${this.handleMoveInput}
      />
      ${
        count > 1
          ? html`<p class="muted">
              Moves ${plural(count, 'entry', 'entries')} with their history.
            </p>`
          : nothing
      }
      ${this.actionError ? html`<p role="alert">${this.actionError}</p>` : nothing}
      <div class="actions">
        <button type="submit" class="primary" ?disabled=${this.busy}>Move</button>
        <button type="button" @click=${this.handleCancel}>Cancel</button>
      </div>
    </form>`;
  }

  private renderDelete(detail: Exclude<Detail, { kind: 'error' }>) {
    const count = (detail.kind === 'entry' ? 1 : 0) + detail.descendants;
    return html`<div class="panel" role="group" aria-label="Confirm delete">
      <p>
        ${
          detail.descendants > 0
            ? html`<strong>Delete ${plural(count, 'entry', 'entries')}?</strong> “${detail.path}”
                and everything below it will be deleted.`
            : html`<strong>Delete “${detail.path}”?</strong>`
        }
      </p>
      <p class="muted">Deleted entries stay in history and can be restored from there.</p>
      ${this.actionError ? html`<p role="alert">${this.actionError}</p>` : nothing}
      <div class="actions">
        <button class="danger" ?disabled=${this.busy} @click=${() => this.handleDelete(detail)}>
          Delete
        </button>
        <button class="cancel" @click=${this.handleCancel}>Cancel</button>
      </div>
    </div>`;
  }

  private setMode(mode: Mode): void {
    const opener = this.opener;
    this.opener = mode === 'view' ? undefined : mode;
    this.mode = mode;
    this.actionError = '';
    this.status = '';
    void this.updateComplete.then(() => {
      const focus =
        mode === 'edit'
          ? 'textarea'
          : mode === 'move'
            ? 'input[type=text]'
            : mode === 'delete'
              ? // The safe choice first: Enter or Space right away keeps everything.
                '.panel button.cancel'
              : opener
                ? `.toolbar button[data-opens='${opener}']`
                : '.toolbar button';
      const form = mode === 'view' ? undefined : this.renderRoot.querySelector('.panel');
      if (form) {
        // The form in view from its top (this pane scrolls, the page does not), so Save, which
        // sticks to the pane's foot, is in view too.
        const top = form.getBoundingClientRect().top - this.getBoundingClientRect().top;
        if (top < 0 || top > this.clientHeight - 96) this.scrollTop += top - 8;
        if (mode === 'edit') this.fitEditor();
      }
      const el =
        this.renderRoot.querySelector<HTMLElement>(focus) ??
        this.renderRoot.querySelector<HTMLElement>('.toolbar button');
      el?.focus({ preventScroll: form !== undefined });
    });
  }

  private handleEdit(): void {
    const detail = this.watch.value;
    if (detail?.kind !== 'entry') return;
    const { content, metadata } = detail.entry;
    this.editBase = { content, version: metadata.version };
    this.draft = contentText(content);
    this.format = typeof content === 'string' ? 'text' : 'json';
    this.setMode('edit');
  }

  private handleFormat(format: ContentFormat): void {
    this.format = format;
    this.actionError = '';
  }

  private handleDraftInput(e: Event): void {
    this.draft = (e.target as HTMLTextAreaElement).value;
  }

  private handleMoveStart(): void {
    this.moveTo = this.path ?? '';
    this.setMode('move');
  }

  private handleMoveInput(e: Event): void {
    this.moveTo = (e.target as HTMLInputElement).value;
  }

  private handleDeleteStart(): void {
    this.setMode('delete');
  }

  private handleCancel(): void {
    this.editBase = undefined;
    this.setMode('view');
  }

  /** Runs one engine call with the busy flag; a rejected call (worker gone) becomes the error. */
  private async run(action: () => Promise<void>): Promise<void> {
    this.busy = true;
    this.actionError = '';
    // A note about the last change ("Saved as version 2") is out of date once another begins.
    this.status = '';
    try {
      await action();
    } catch (e) {
      this.actionError = `The memory worker did not answer: ${e instanceof Error ? e.message : String(e)}. Reload the page and try again.`;
    } finally {
      this.busy = false;
    }
  }

  private async handleSave(e: Event): Promise<void> {
    e.preventDefault();
    const { memory, path } = this;
    const detail = this.watch.value;
    if (!memory || !path || detail?.kind !== 'entry' || this.busy) return;
    const plan = planSave(this.editBase?.content ?? detail.entry.content, this.draft, this.format);
    if (plan.kind === 'invalid') {
      this.actionError = plan.message;
      return;
    }
    if (plan.kind === 'unchanged') {
      this.editBase = undefined;
      this.setMode('view');
      this.status = 'No changes to save.';
      this.statusVersion = detail.entry.metadata.version;
      return;
    }
    await this.run(async () => {
      // Both keep the context snapshot; a patch also keeps a change made meanwhile elsewhere.
      const result =
        plan.kind === 'patch'
          ? await memory.updateMemory(path, plan.patch)
          : await memory.editMemory(path, plan.value);
      if (result.status !== 'SUCCESS') {
        this.actionError = result.message;
        return;
      }
      this.editBase = undefined;
      this.setMode('view');
      this.status = `Saved as version ${result.version}.${
        result.chunksStored ? ' The context from the conversation was kept.' : ''
      }`;
      this.statusVersion = result.version;
      await this.watch.reload();
    });
  }

  private async handleMove(e: Event): Promise<void> {
    e.preventDefault();
    const { memory, path } = this;
    if (!memory || !path || this.busy) return;
    const to = this.moveTo.trim();
    if (!to) {
      this.actionError = 'Type the path to move it to, like “Projects/Archive/Goals”.';
      return;
    }
    await this.run(async () => {
      const result = await memory.moveMemory(path, to);
      if (result.status !== 'SUCCESS') {
        this.actionError = result.message;
        return;
      }
      this.setMode('view');
      this.select(result.to);
      const { from, to: dest, moved } = result;
      this.toast({
        message: `Moved ${named(from, moved)} to “${dest}”.`,
        undo: async () => {
          const back = await memory.moveMemory(dest, from);
          if (back.status !== 'SUCCESS') return `Not undone: ${back.message}`;
          this.select(from);
          return `Moved back to “${from}”.`;
        },
      });
    });
  }

  private async handleDelete(detail: Exclude<Detail, { kind: 'error' }>): Promise<void> {
    const { memory, path } = this;
    if (!memory || !path || this.busy) return;
    await this.run(async () => {
      const result = await memory.deleteMemory(path, detail.descendants > 0);
      if (result.status === 'SUCCESS') {
        this.deleted = [...(detail.kind === 'entry' ? [path] : []), ...detail.below];
        this.setMode('view');
        await this.watch.reload();
        const { trashId, deleted } = result;
        this.toast({
          message: `Deleted ${named(path, deleted)}. It is in the Trash.`,
          undo:
            trashId === undefined
              ? undefined
              : async () => {
                  const back = await memory.restoreDeleted(trashId);
                  if (back.status !== 'SUCCESS') return `Not undone: ${back.message}`;
                  this.deleted = [];
                  return `Restored ${named(path, back.restored)}.`;
                },
        });
        return;
      }
      // HAS_CHILDREN: entries appeared below since the count was shown; show the new count.
      if (result.status === 'ERROR' && result.code === 'HAS_CHILDREN') await this.watch.reload();
      this.actionError = result.message;
    });
  }

  /** The status note while it still speaks of the entry shown (else nothing: `:empty` hides it). */
  private statusNow(detail: Exclude<Detail, { kind: 'error' }>): string {
    const current =
      this.statusVersion === undefined ||
      (detail.kind === 'entry' && detail.entry.metadata.version === this.statusVersion);
    return current ? this.status : '';
  }

  private async handleSelectVersion(id: number): Promise<void> {
    this.selectedVersion = this.selectedVersion === id ? undefined : id;
    this.actionError = '';
    if (this.selectedVersion === undefined) return;
    // The version opens below its row, often below the pane's fold: brought into view, its
    // Restore with it, so the click visibly did something.
    await this.updateComplete;
    this.renderRoot.querySelector('.version-detail')?.scrollIntoView({ block: 'nearest' });
  }

  private async handleRestore(v: HistoryVersion): Promise<void> {
    const { memory } = this;
    if (!memory || this.busy) return;
    await this.run(async () => {
      const result = await memory.restoreMemory(v.id);
      if (result.status !== 'SUCCESS') {
        this.actionError = result.message;
        return;
      }
      this.selectedVersion = undefined;
      await this.watch.reload();
      const { path, previousId } = result;
      this.toast({
        message: `Restored version ${v.version} of “${path}” as version ${result.version}.`,
        // Undo: the version it replaced comes back, or (nothing was there) it goes again.
        undo: async () => {
          const back =
            previousId !== undefined
              ? await memory.restoreMemory(previousId)
              : await memory.deleteMemory(path);
          if (back.status !== 'SUCCESS') return `Not undone: ${back.message}`;
          return previousId !== undefined
            ? `“${path}” is as it was before the restore.`
            : `“${path}” is back in the Trash.`;
        },
      });
    });
  }

  /**
   * Shows what was done, with Undo, once this pane has re-rendered (so a button that went with
   * the change has gone, and the toast can tell that focus needs a new home).
   */
  private toast(notice: { message: string; undo?: () => Promise<string> }): void {
    void this.updateComplete.then(() =>
      requestToast(this, {
        message: notice.message,
        action: notice.undo ? { label: 'Undo', run: notice.undo } : undefined,
        restoreFocus: () => this.focusMain(),
      }),
    );
  }

  /** Focus back into this pane: its first action, else its title, once it shows its path. */
  private focusMain(): void {
    if (!this.isConnected) return;
    this.wantsFocus = true;
    this.requestUpdate();
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-entry-detail': SmEntryDetail;
  }
}
