// Export and Import of the whole memory: Markdown (all or the selected subtree) and the JSON
// backup, downloaded as files; imports validated by the engine, which writes nothing on error.
// Import also takes other tools' files (docs/import-export.md), several at once, from the file
// picker or dropped anywhere on the app.
import { deepActiveElement } from './focus';
import { transfer } from 'comlink';
import { LitElement, html, nothing } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import type { Backups } from '../app/backups';
import { daysAgo } from '../app/backup-plan';
import { downloadFile } from '../app/backup-files';
import type { FileImportResult, ImportResult, ToolError } from '../memory/types';
import { fileSizeRefusal, MAX_OWN_FILE_BYTES, unrestorableBackup } from '../memory/imports/limits';
import type { MemoryClient } from '../worker-client';
import { BackupsController } from './backups-controller';
import { emit } from './events';
import { base, tokens } from './styles';
import { dataMenuStyles } from './sm-data-menu.styles';

type ExportKind = 'markdown' | 'subtree' | 'json' | 'lorebook';

declare module './events' {
  interface SmEvents {
    /** Show Settings → Data (storage and backups). */
    'sm-open-backups': Record<string, never>;
  }
}

/** What the import dialog shows. */
type Step =
  | { kind: 'closed' }
  | { kind: 'choose'; file: string; text: string }
  | { kind: 'confirm-replace'; file: string; text: string; syncs: boolean }
  | {
      kind: 'working';
      title: string;
      file?: string;
      /** Files done and in all, when several are imported: the count shows and Cancel stops. */
      files?: { done: number; total: number };
    }
  | { kind: 'done'; message: string }
  | { kind: 'report'; reports: FileReport[] }
  | { kind: 'failed'; title: string; message: string };

/** Local date as YYYY-MM-DD, for file names. */
export function isoDay(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** The download name: structured-memory[-lorebook][-subtree]-YYYY-MM-DD.ext */
export function exportFileName(
  ext: 'md' | 'json',
  date: Date,
  subtree?: string,
  lorebook = false,
): string {
  // Composed (NFKC: an accent stays on its letter, a full-width letter becomes plain), so a
  // name keeps its letters whole: "Zürich", not "Zu-rich".
  const slug = subtree
    ?.normalize('NFKC')
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  const what = lorebook ? 'lorebook-' : '';
  return `structured-memory-${what}${slug ? `${slug}-` : ''}${isoDay(date)}.${ext}`;
}

/** Whether a chosen file is a JSON backup (by name or type, else by its first character). */
export function looksLikeJson(name: string, type: string, text: string): boolean {
  if (/\.json$/i.test(name) || type === 'application/json') return true;
  if (/\.(md|markdown)$/i.test(name) || type === 'text/markdown') return false;
  return text.trimStart().startsWith('{');
}

/** What became of one imported file: a sentence, and the lines or items it left out. */
export interface FileReport {
  file: string;
  ok: boolean;
  text: string;
  details: string[];
  /** The chats it made, which the report offers to open. */
  chats?: { id: number; title: string }[];
}

/**
 * Whether a file's text is this app's own JSON backup (it asks Merge or Replace all): a backup
 * names its format first; one whose keys a tool put in another order (`jq -S`) is read whole to
 * find it. Other JSON goes to the importers of other tools' files.
 */
export function isBackupText(text: string): boolean {
  if (/^\uFEFF?\s*\{\s*"format"\s*:\s*"structured-memory-backup"/.test(text.slice(0, 200)))
    return true;
  if (!/^\uFEFF?\s*\{/.test(text.slice(0, 200)) || !text.includes('"structured-memory-backup"'))
    return false;
  try {
    const value: unknown = JSON.parse(text.replace(/^\uFEFF/, ''));
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as { format?: unknown }).format === 'structured-memory-backup'
    );
  } catch {
    return false;
  }
}

/**
 * Whether a file that starts so may be this app's backup with its keys in another order (a JSON
 * object whose start does not name the format): it is read whole to find out.
 */
function mayBeBackup(head: string): boolean {
  return /^\uFEFF?\s*\{/.test(head) && !isBackupText(head);
}

/** A Markdown export: by name or type, else text that is not JSON or JSON lines. */
export function isMarkdownFile(name: string, type: string, text: string): boolean {
  return !/\.jsonl$/i.test(name) && !looksLikeJson(name, type, text);
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The report's heading: whether anything came in, and of how many files when not all did. */
export function reportHeading(reports: readonly Pick<FileReport, 'ok'>[]): string {
  const ok = reports.filter((r) => r.ok).length;
  if (!ok) return 'Nothing was imported';
  return ok < reports.length ? `Imported ${ok} of ${reports.length} files` : 'Import finished';
}

/** The report of a file that another tool wrote (`importFile`'s answer). */
export function fileReport(file: string, r: FileImportResult | ToolError): FileReport {
  if (r.status !== 'SUCCESS') return { file, ok: false, text: r.message, details: [] };
  if (r.duplicate)
    return { file, ok: true, text: 'Imported before: nothing was added.', details: [] };
  const parts: string[] = [];
  for (const c of r.chats)
    parts.push(`the chat “${c.title}” (${plural(c.messages, 'message', 'messages')})`);
  if (r.entries.length) parts.push(plural(r.entries.length, 'entry', 'entries'));
  const there = r.unchanged
    ? `${plural(r.unchanged, 'entry was', 'entries were')} there already`
    : '';
  const text = parts.length
    ? `Imported ${parts.join(', ')}${there ? `; ${there}` : ''}.`
    : there
      ? `Nothing new: ${there}.`
      : 'Nothing to import.';
  return {
    file,
    ok: true,
    text,
    ...(r.chats.length ? { chats: r.chats.map((c) => ({ id: c.id, title: c.title })) } : {}),
    details: r.skipped.map((s) => `${s.where[0].toUpperCase()}${s.where.slice(1)}: ${s.reason}`),
  };
}

function importSummary(r: ImportResult): string {
  const n = r.imported;
  const here = r.chatsAlreadyHere ?? 0;
  const chats = here
    ? ` ${here} ${here === 1 ? 'chat was' : 'chats were'} here already, so not added again.`
    : '';
  const same = r.unchanged ? `, ${r.unchanged} unchanged` : '';
  const entries = `${n} ${n === 1 ? 'entry' : 'entries'} (${r.created} new, ${r.updated} updated${same})`;
  const added = r.chatsAdded
    ? ` and ${plural(r.chatsAdded, 'chat', 'chats')} (${plural(r.messagesAdded ?? 0, 'message', 'messages')})`
    : '';
  return `Imported ${entries}${added}.${chats}`;
}

function isError(r: unknown): r is ToolError {
  return typeof r === 'object' && r !== null && (r as ToolError).status === 'ERROR';
}

/**
 * `<sm-data-menu>`: the Export and Import buttons.
 *
 * Export discloses a short list of buttons (arrow keys move, Escape closes): "Markdown", "Markdown
 * (selected subtree)" when a path is selected, "JSON" (the full backup) and "SillyTavern lorebook"
 * (all memory or the selected subtree as World Info); the file is downloaded through a Blob URL.
 * Import opens a file picker (several files: .md, .markdown, .json, .jsonl, .png), and files
 * dropped anywhere on the app are imported the same way. A JSON backup alone asks Merge or Replace
 * all (Replace all asks again), Markdown merges; other tools' files (docs/import-export.md) are
 * imported one after the other and a report says what became of each. A dialog shows progress and
 * then the result, or the engine's message when the file is refused (nothing is written then).
 *
 * The menu ends with "Backup settings…" (Settings → Data), described by when memory was last
 * backed up; an export of all memory counts as a backup.
 *
 * @fires sm-notice - After an export: which file was saved.
 * @fires sm-open-backups - "Backup settings…" was chosen.
 */
@customElement('sm-data-menu')
export class SmDataMenu extends LitElement {
  static override styles = [tokens, base, dataMenuStyles];

  /** The memory engine (the worker proxy). */
  @property({ attribute: false }) memory: MemoryClient | undefined;

  /** The path selected in the explorer; when set, Markdown export offers this subtree. */
  @property() selectedPath: string | undefined;

  /** The page's backups: when memory was last backed up, and where exports are recorded. */
  @property({ attribute: false }) backups: Backups | undefined;

  @state() private menuOpen = false;
  /**
   * The selected path, once the menu found something saved at or below it: a path whose entries
   * were deleted or moved away since is not offered (its export would hold nothing).
   */
  @state() private subtreeHere: string | undefined;
  @state() private exporting = false;
  @state() private step: Step = { kind: 'closed' };
  /** Cancel was pressed: the files after the one being imported are left alone. */
  @state() private cancelling = false;

  @query('dialog') private dialog!: HTMLDialogElement;
  @query('input[type=file]') private fileInput!: HTMLInputElement;
  @query('#export-button') private exportButton!: HTMLButtonElement;

  constructor() {
    super();
    new BackupsController(this, () => this.backups);
  }

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener('dragover', this.handleDragOver);
    window.addEventListener('drop', this.handleDrop);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    document.removeEventListener('pointerdown', this.handleOutside, true);
    window.removeEventListener('dragover', this.handleDragOver);
    window.removeEventListener('drop', this.handleDrop);
  }

  override render() {
    const subtree = this.subtree();
    return html`
      <div class="menu-wrap" @keydown=${this.handleMenuKey}>
        <button
          id="export-button"
          aria-expanded=${this.menuOpen ? 'true' : 'false'}
          aria-controls="export-menu"
          ?disabled=${!this.memory}
          aria-disabled=${this.exporting ? 'true' : 'false'}
          @click=${this.handleToggleMenu}
        >
          Export<span class="caret" aria-hidden="true">▼</span>
        </button>
        ${
          this.menuOpen
            ? html`<ul id="export-menu" class="menu" aria-label="Export formats">
                <li>
                  <button aria-describedby="hint-md" @click=${() => this.handleExport('markdown')}>
                    Markdown
                  </button>
                  <span class="hint" id="hint-md">All memory, readable, re-importable</span>
                </li>
                ${
                  subtree
                    ? html`<li>
                        <button
                          aria-describedby="hint-subtree"
                          @click=${() => this.handleExport('subtree')}
                        >
                          Markdown (selected subtree)
                        </button>
                        <span class="hint" id="hint-subtree">${subtree}</span>
                      </li>`
                    : nothing
                }
                <li>
                  <button aria-describedby="hint-json" @click=${() => this.handleExport('json')}>
                    JSON
                  </button>
                  <span class="hint" id="hint-json"
                    >Full backup: memory, history, conversations</span
                  >
                </li>
                <li>
                  <button
                    aria-describedby="hint-lorebook"
                    @click=${() => this.handleExport('lorebook')}
                  >
                    SillyTavern lorebook
                  </button>
                  <span class="hint" id="hint-lorebook"
                    >${subtree ? `${subtree}, as World Info` : 'All memory, as World Info'}</span
                  >
                </li>
                ${
                  this.backups
                    ? html`<li class="backups">
                        <button aria-describedby="hint-backups" @click=${this.handleOpenBackups}>
                          Backup settings…
                        </button>
                        <span class="hint" id="hint-backups"
                          >Last backup:
                          ${daysAgo(this.backups.state.record.lastBackup, Date.now())}</span
                        >
                      </li>`
                    : nothing
                }
              </ul>`
            : nothing
        }
      </div>
      <button ?disabled=${!this.memory} @click=${this.handleImportClick}>Import</button>
      <input
        type="file"
        accept=".md,.markdown,.json,.jsonl,.png,application/json,text/markdown,image/png"
        multiple
        tabindex="-1"
        aria-hidden="true"
        @change=${this.handleFile}
      />
      <dialog
        aria-labelledby="data-title"
        @cancel=${this.handleDialogCancel}
        @close=${this.handleDialogClosed}
      >
        ${this.renderStep()}
      </dialog>
    `;
  }

  private renderStep() {
    const s = this.step;
    switch (s.kind) {
      case 'closed':
        return nothing;
      case 'choose':
        return html`<h2 id="data-title">Import a JSON backup</h2>
          <p>How should <span class="file">${s.file}</span> be imported?</p>
          <div class="choices">
            <button class="choice primary" @click=${() => this.runImport(s.file, s.text, 'json')}>
              <span>Merge<span class="sr">:</span></span>
              <span class="hint"
                >Keep your current memory and add the backup to it. An entry at the same path is
                updated; its old version stays in history.</span
              >
            </button>
            <button class="choice" @click=${() => this.confirmReplace(s.file, s.text)}>
              <span>Replace all<span class="sr">:</span></span>
              <span class="hint">Delete everything here first, then load the backup.</span>
            </button>
          </div>
          <div class="actions"><button @click=${this.handleClose}>Cancel</button></div>`;
      case 'confirm-replace':
        return html`<h2 id="data-title">Replace all memory?</h2>
          <p>
            Everything stored in this browser (memory, history and conversations) is deleted and
            replaced by <span class="file">${s.file}</span>. This cannot be undone; export a backup
            first if you may want it back.
          </p>
          ${
            s.syncs
              ? html`<p>
                  This browser syncs: at the next sync, what the sync server holds comes back and is
                  merged with the backup. Nothing on your other devices is deleted.
                </p>`
              : nothing
          }
          <div class="actions">
            <button @click=${this.handleClose}>Cancel</button>
            <button class="danger" @click=${() => this.runImport(s.file, s.text, 'replace')}>
              Replace all
            </button>
          </div>`;
      case 'working':
        return html`<h2 id="data-title">${s.title}</h2>
          ${s.file ? html`<p class="file">${s.file}</p>` : nothing}
          ${
            s.files
              ? html`<progress
                    aria-label=${s.title}
                    max=${s.files.total}
                    value=${s.files.done}
                  ></progress>
                  <div class="actions">
                    <button ?disabled=${this.cancelling} @click=${this.handleCancelImport}>
                      ${this.cancelling ? 'Stopping after this file…' : 'Cancel'}
                    </button>
                  </div>`
              : html`<progress aria-label=${s.title}></progress>`
          }`;
      case 'report':
        return html`<h2 id="data-title">${reportHeading(s.reports)}</h2>
          <div role="status">
            <ul class="report">
              ${s.reports.map(
                (r) =>
                  html`<li class=${r.ok ? 'ok' : 'failed'}>
                    <span class="file">${r.file}</span>: ${r.text}
                    ${(r.chats ?? []).map(
                      (c) =>
                        html`<button class="link" @click=${() => this.handleOpenChat(c.id)}>
                          Open “${c.title}”
                        </button>`,
                    )}
                    ${
                      r.details.length
                        ? html`<ul class="details">
                            ${r.details.slice(0, 20).map((d) => html`<li>${d}</li>`)}
                            ${
                              r.details.length > 20
                                ? html`<li>…and ${r.details.length - 20} more</li>`
                                : nothing
                            }
                          </ul>`
                        : nothing
                    }
                  </li>`,
              )}
            </ul>
          </div>
          <div class="actions">
            <button class="primary" @click=${this.handleClose}>Close</button>
          </div>`;
      case 'done':
        return html`<h2 id="data-title">Import finished</h2>
          <p role="status">${s.message}</p>
          <div class="actions">
            <button class="primary" @click=${this.handleClose}>Close</button>
          </div>`;
      case 'failed':
        return html`<h2 id="data-title">${s.title}</h2>
          <p role="alert">${s.message}</p>
          <div class="actions">
            <button class="primary" @click=${this.handleClose}>Close</button>
          </div>`;
    }
  }

  private async showStep(step: Step): Promise<void> {
    const wasOpen = this.dialog.open;
    this.step = step;
    await this.updateComplete;
    if (step.kind === 'closed') this.dialog.close();
    else if (!wasOpen) this.dialog.showModal();
    else {
      // The step's buttons replaced the ones that had focus: the first of the new ones takes
      // it (Merge; Cancel before Replace all; Close), as when the dialog opened.
      this.dialog.querySelector<HTMLButtonElement>('button')?.focus();
    }
  }

  private handleToggleMenu(): void {
    // Not `disabled` while it exports: a disabled button drops the keyboard's focus to the page.
    if (this.exporting) return;
    this.setMenu(!this.menuOpen, true);
  }

  /** The selected subtree the menu offers, when something is saved at or below it. */
  private subtree(): string | undefined {
    return this.selectedPath && this.subtreeHere === this.selectedPath
      ? this.selectedPath
      : undefined;
  }

  /** Looks whether anything is saved at or below the selected path (the menu offers it then). */
  private async checkSubtree(): Promise<void> {
    const path = this.selectedPath;
    if (!path || !this.memory) return;
    const listed = await this.memory.listMemory(path, { maxChars: 100 }).catch(() => undefined);
    if (path !== this.selectedPath) return;
    this.subtreeHere = listed?.status === 'SUCCESS' ? path : undefined;
  }

  private setMenu(open: boolean, focusFirst = false): void {
    this.menuOpen = open;
    if (open) {
      void this.checkSubtree();
      document.addEventListener('pointerdown', this.handleOutside, true);
      void this.updateComplete.then(() => {
        if (focusFirst) this.menuItems()[0]?.focus();
      });
    } else {
      document.removeEventListener('pointerdown', this.handleOutside, true);
    }
  }

  protected override updated(): void {
    if (this.menuOpen) this.placeMenu();
  }

  /**
   * Keeps the open menu in the window: moved left as far as it would pass the right edge (a
   * button near it, a phone's narrow screen), never past the left edge. Measured again at every
   * update, as an item it adds (the selected subtree) can widen it.
   */
  private placeMenu(): void {
    const menu = this.renderRoot.querySelector<HTMLElement>('ul.menu');
    if (!menu) return;
    menu.style.removeProperty('transform');
    const r = menu.getBoundingClientRect();
    // The page's width, not innerWidth: a phone widens its layout to whatever overflows.
    const width = document.documentElement.clientWidth;
    const shift = Math.max(0, Math.min(r.right - (width - 8), r.left - 8));
    if (shift > 0) menu.style.transform = `translateX(${-shift}px)`;
  }

  /** Replace all's confirmation, which says what sync will do when this browser syncs. */
  private async confirmReplace(file: string, text: string): Promise<void> {
    const config = await this.memory?.syncConfig().catch(() => undefined);
    await this.showStep({
      kind: 'confirm-replace',
      file,
      text,
      syncs: !!(config?.url && config.database),
    });
  }

  private menuItems(): HTMLButtonElement[] {
    return [...this.renderRoot.querySelectorAll<HTMLButtonElement>('ul.menu button')];
  }

  /** Closes the menu on a press anywhere outside it. */
  private readonly handleOutside = (e: PointerEvent) => {
    const wrap = this.renderRoot.querySelector('.menu-wrap');
    if (wrap && !e.composedPath().includes(wrap)) this.setMenu(false);
  };

  private handleMenuKey(e: KeyboardEvent): void {
    if (!this.menuOpen) {
      if (e.key === 'ArrowDown' && e.target === this.exportButton) {
        e.preventDefault();
        this.setMenu(true, true);
      }
      return;
    }
    const items = this.menuItems();
    const at = items.indexOf(this.shadowRoot?.activeElement as HTMLButtonElement);
    let next: number | undefined;
    if (e.key === 'ArrowDown') next = (at + 1) % items.length;
    else if (e.key === 'ArrowUp') next = (at - 1 + items.length) % items.length;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = items.length - 1;
    else if (e.key === 'Escape') {
      e.preventDefault();
      this.setMenu(false);
      this.exportButton.focus();
      return;
    } else if (e.key === 'Tab') {
      this.setMenu(false);
      return;
    }
    if (next !== undefined) {
      e.preventDefault();
      items[next]?.focus();
    }
  }

  private async handleExport(kind: ExportKind): Promise<void> {
    const { memory } = this;
    this.closeToButton();
    if (!memory || this.exporting) return;
    this.exporting = true;
    const subtree = kind === 'subtree' || kind === 'lorebook' ? this.subtree() : undefined;
    try {
      const text =
        kind === 'json'
          ? await memory.exportJson()
          : kind === 'lorebook'
            ? await memory.exportLorebook(subtree ?? '')
            : subtree
              ? await memory.exportMarkdown(subtree)
              : await memory.exportMarkdown();
      if (isError(text)) {
        await this.showStep({ kind: 'failed', title: 'Export failed', message: text.message });
        return;
      }
      const json = kind === 'json' || kind === 'lorebook';
      const name = exportFileName(json ? 'json' : 'md', new Date(), subtree, kind === 'lorebook');
      const type = json ? 'application/json' : 'text/markdown';
      downloadFile(text, name, type);
      // All of memory, in a file Import restores: a backup (a subtree is not, nor a lorebook,
      // which carries no history or chats).
      if (!subtree && kind !== 'lorebook') this.backups?.recordBackup();
      const unrestorable = kind === 'json' && !subtree ? unrestorableBackup(text) : undefined;
      emit(this, 'sm-notice', {
        kind: unrestorable ? 'error' : 'info',
        message: `Exported memory to ${name}.${unrestorable ? ` ${unrestorable}` : ''}`,
      });
    } catch (e) {
      await this.showStep({
        kind: 'failed',
        title: 'Export failed',
        message: `The memory worker did not answer: ${e instanceof Error ? e.message : String(e)}`,
      });
    } finally {
      this.exporting = false;
    }
  }

  private handleOpenBackups(): void {
    // Settings gives focus back to what opened it: Export, not the menu item that goes now.
    this.closeToButton();
    emit(this, 'sm-open-backups', {});
  }

  /** Closes the menu, the keyboard's focus back on Export (the item chosen goes with the menu). */
  private closeToButton(): void {
    const inMenu = !!deepActiveElement()?.closest('ul.menu');
    this.setMenu(false);
    if (inMenu) this.exportButton?.focus();
  }

  private handleImportClick(): void {
    this.fileInput.value = '';
    this.fileInput.click();
  }

  private async handleFile(): Promise<void> {
    await this.importFiles([...(this.fileInput.files ?? [])]);
  }

  /** Files dragged over the app can be dropped anywhere on it. */
  private readonly handleDragOver = (e: DragEvent) => {
    if (!this.memory || !e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
  };

  private readonly handleDrop = (e: DragEvent) => {
    const files = [...(e.dataTransfer?.files ?? [])];
    if (!this.memory || !files.length) return;
    e.preventDefault();
    // One import at a time: a drop during one is left alone.
    if (this.step.kind === 'working') return;
    void this.importFiles(files);
  };

  /**
   * Imports files: one Markdown export or JSON backup of this app as before (a backup asks Merge
   * or Replace all); any other files, or several, one after the other, each in its own
   * transaction, then a report of each.
   */
  async importFiles(files: File[]): Promise<void> {
    if (!files.length || !this.memory) return;
    if (files.length === 1 && !isPng(files[0])) {
      // Its start says whether it is this app's own file; another tool's is not read here.
      const file = files[0];
      const head = await this.readText(file.slice(0, 256), file.name);
      if (head === undefined) return;
      const own = isMarkdownFile(file.name, file.type, head) || isBackupText(head);
      // Refused before it is read: a file of gigabytes would hold the page, then fail.
      const refusal = fileSizeRefusal(file.name, file.size, true);
      // A JSON object may be a backup whose keys a tool reordered: read whole (within the
      // backup's limit) to tell; else another tool's file, imported below.
      if (own || (mayBeBackup(head) && !refusal)) {
        if (refusal) {
          return this.showStep({
            kind: 'failed',
            title: 'Nothing was imported',
            message: `${file.name}: ${refusal}`,
          });
        }
        const text = await this.readText(file, file.name);
        if (text === undefined) return;
        if (isMarkdownFile(file.name, file.type, text))
          return this.runImport(file.name, text, 'markdown');
        if (isBackupText(text)) return this.chooseBackup(file.name, text);
      }
    }
    const reports: FileReport[] = [];
    this.cancelling = false;
    for (const [i, file] of files.entries()) {
      // Each file is written in one transaction: a cancel leaves none half-written.
      if (this.cancelling) {
        reports.push({
          file: file.name,
          ok: false,
          text: 'Not imported: the import was cancelled.',
          details: [],
        });
        continue;
      }
      await this.showStep({
        kind: 'working',
        title: files.length > 1 ? `Importing ${i + 1} of ${files.length}…` : 'Importing…',
        file: file.name,
        ...(files.length > 1 ? { files: { done: i, total: files.length } } : {}),
      });
      reports.push(await this.importOne(file));
    }
    this.cancelling = false;
    await this.showStep({ kind: 'report', reports });
  }

  /** A backup that cannot be restored is refused before Merge or Replace all is asked. */
  private async chooseBackup(file: string, text: string): Promise<void> {
    await this.showStep({ kind: 'working', title: 'Checking the backup…', file });
    try {
      const checked = await this.memory!.checkBackup(text);
      await this.showStep(
        checked.status === 'SUCCESS'
          ? { kind: 'choose', file, text }
          : {
              kind: 'failed',
              title: 'Nothing was imported',
              message: `${file}: ${checked.message}`,
            },
      );
    } catch (e) {
      await this.showStep({
        kind: 'failed',
        title: 'Import failed',
        message: `The memory worker did not answer: ${e instanceof Error ? e.message : String(e)}`,
      });
    }
  }

  private async importOne(file: File): Promise<FileReport> {
    const { memory } = this;
    const failed = (text: string): FileReport => ({
      file: file.name,
      ok: false,
      text,
      details: [],
    });
    let bytes: Uint8Array;
    let head: string;
    try {
      // The start tells this app's own files apart; the rest is not decoded here. A file over
      // its kind's limit is refused before it is read (a file of gigabytes would hold the page).
      head = new TextDecoder().decode(new Uint8Array(await file.slice(0, 256).arrayBuffer()));
      const own =
        (!isPng(file) && isMarkdownFile(file.name, file.type, head)) || isBackupText(head);
      const refusal = fileSizeRefusal(file.name, file.size, own);
      if (refusal) return failed(refusal);
      bytes = new Uint8Array(await file.arrayBuffer());
    } catch (e) {
      return failed(`It could not be read: ${e instanceof Error ? e.message : String(e)}`);
    }
    try {
      if (!isPng(file) && isMarkdownFile(file.name, file.type, head)) {
        const r = await memory!.importMarkdown(new TextDecoder().decode(bytes));
        return r.status === 'SUCCESS'
          ? { file: file.name, ok: true, text: importSummary(r), details: [] }
          : failed(r.message);
      }
      if (
        isBackupText(head) ||
        (mayBeBackup(head) &&
          bytes.length <= MAX_OWN_FILE_BYTES &&
          isBackupText(new TextDecoder().decode(bytes)))
      ) {
        return failed(
          'It is a backup of this app: import it on its own to choose Merge or Replace all.',
        );
      }
      // The bytes move to the worker (not copied): a large file does not hold up the page.
      const sent = transfer({ name: file.name, data: bytes }, [bytes.buffer]);
      return fileReport(file.name, await memory!.importFile(sent));
    } catch (e) {
      return failed(
        `The memory worker did not answer: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  }

  private async readText(file: Blob, name: string): Promise<string | undefined> {
    try {
      return await file.text();
    } catch (e) {
      await this.showStep({
        kind: 'failed',
        title: 'Import failed',
        message: `Could not read ${name}: ${e instanceof Error ? e.message : String(e)}`,
      });
      return undefined;
    }
  }

  private async runImport(
    file: string,
    text: string,
    how: 'json' | 'replace' | 'markdown',
  ): Promise<void> {
    const { memory } = this;
    if (!memory) return;
    await this.showStep({ kind: 'working', title: 'Importing…', file });
    try {
      const result =
        how === 'markdown'
          ? await memory.importMarkdown(text)
          : await memory.importJson(text, how === 'replace' ? 'replace' : 'merge');
      await this.showStep(
        result.status === 'SUCCESS'
          ? { kind: 'done', message: importSummary(result) }
          : {
              kind: 'failed',
              title: 'Nothing was imported',
              message: `${file}: ${result.message}`,
            },
      );
    } catch (e) {
      await this.showStep({
        kind: 'failed',
        title: 'Import failed',
        message: `The memory worker did not answer: ${e instanceof Error ? e.message : String(e)}`,
      });
    }
  }

  /** Shows an imported chat (the app switches to it) and closes the report. */
  private handleOpenChat(id: number): void {
    emit(this, 'sm-switch-conversation', { id });
    void this.showStep({ kind: 'closed' });
  }

  private handleCancelImport(): void {
    this.cancelling = true;
  }

  private handleClose(): void {
    void this.showStep({ kind: 'closed' });
  }

  /** Escape closes the dialog, except while an import runs (its result must be seen). */
  private handleDialogCancel(e: Event): void {
    if (this.step.kind === 'working') e.preventDefault();
  }

  private handleDialogClosed(): void {
    if (this.step.kind !== 'working') this.step = { kind: 'closed' };
  }
}

/** A PNG image (a character card), read as bytes. */
function isPng(file: File): boolean {
  return /\.png$/i.test(file.name) || file.type === 'image/png';
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-data-menu': SmDataMenu;
  }
  interface GlobalEventHandlersEventMap {
    'sm-open-backups': CustomEvent<Record<string, never>>;
  }
}
