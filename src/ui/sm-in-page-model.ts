// <sm-in-page-model>: Settings → Server, "In this browser": the GGUF model kept in this browser,
// chosen from disk (never uploaded) or downloaded from a link (with progress, Cancel, and Resume
// after a reload or a lost connection), a list of suggested small models, the kept model's size
// with Delete, and whether it runs on one thread or several. docs/in-page-model.md.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { formatBytes } from '../app/storage-status';
import {
  discardDownload,
  downloadModel,
  pendingDownload,
  type DownloadProgress,
  type PendingDownload,
} from '../llm/in-page/download';
import {
  canKeepModelFiles,
  deleteModelFile,
  describeModelFile,
  saveModelFiles,
  type ModelFile,
} from '../llm/in-page/model-files';
import { SUGGESTED_MODELS } from '../llm/in-page/suggested-models';
import { emit } from './events';
import { base, tokens } from './styles';

const percent = (p: DownloadProgress) => (p.total ? Math.floor((p.done / p.total) * 100) : 0);
const progressLine = (p: DownloadProgress) =>
  `${formatBytes(p.done)} of ${formatBytes(p.total)} (${percent(p)}%)`;

const keptLine = (f: ModelFile) =>
  `${formatBytes(f.bytes)}${f.parts > 1 ? ` in ${f.parts} parts` : ''}, ${
    f.session
      ? 'held until this page closes (a file opened from disk cannot keep it: choose it again next time)'
      : 'kept in this browser'
  }`;

/**
 * The in-page model's file: a file picker (`.gguf`, or every part of a split model), a link to
 * download one from (with suggested models), then the kept model's name and size with a Delete
 * button. What cannot run here is refused in a sentence and nothing is kept or downloaded.
 *
 * @fires sm-in-page-model - The kept file changed; `detail.name` is its name ('' after Delete).
 */
@customElement('sm-in-page-model')
export class SmInPageModel extends LitElement {
  static override styles = [
    tokens,
    base,
    css`
      :host {
        display: block;
        min-width: 0;
        margin: 10px 0;
      }
      label {
        display: block;
        font-weight: 600;
      }
      label.link {
        margin-top: 12px;
      }
      input[type='file'] {
        max-width: 100%;
      }
      .row {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 8px;
        margin: 6px 0;
      }
      .row input[type='url'] {
        flex: 1 1 16rem;
        min-width: 0;
      }
      .name {
        font-weight: 600;
        overflow-wrap: anywhere;
      }
      .hint {
        display: block;
        color: var(--sm-muted);
        font-size: 0.85rem;
      }
      .error {
        color: var(--sm-danger);
      }
      progress {
        flex: 1 1 12rem;
        min-width: 0;
      }
      details {
        margin: 6px 0;
      }
      summary {
        cursor: pointer;
      }
      ul.models {
        list-style: none;
        margin: 6px 0;
        padding: 0;
      }
      ul.models li {
        display: flex;
        flex-wrap: wrap;
        align-items: baseline;
        gap: 4px 10px;
        padding: 6px 0;
        border-top: 1px solid var(--sm-border, #ccc);
      }
      ul.models .what {
        flex: 1 1 14rem;
        min-width: 0;
      }
    `,
  ];

  /** The kept file's name ('' for none). */
  @property() name = '';

  @state() private file: ModelFile | undefined;
  @state() private busy = '';
  @state() private error = '';
  @state() private link = '';
  @state() private progress: DownloadProgress | undefined;
  @state() private pending: PendingDownload | undefined;
  /** False on a page that cannot keep files (the portable file): no downloads there. */
  @state() private canDownload = true;
  private download: AbortController | undefined;
  /** The running download's end (it never rejects): Cancel waits for it before discarding. */
  private downloading: Promise<void> = Promise.resolve();

  override connectedCallback(): void {
    super.connectedCallback();
    void canKeepModelFiles().then((yes) => {
      this.canDownload = yes;
      if (yes) void this.refreshPending();
    });
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    // Settings closed: the download stops, what it kept stays, and Resume goes on later.
    this.download?.abort();
  }

  override updated(changed: Map<string, unknown>): void {
    if (changed.has('name')) void this.refresh();
  }

  private async refresh(): Promise<void> {
    this.file = this.name ? await describeModelFile(this.name) : undefined;
  }

  private async refreshPending(): Promise<void> {
    try {
      this.pending = this.download ? undefined : await pendingDownload();
    } catch {
      this.pending = undefined;
    }
  }

  override render() {
    const threads = crossOriginIsolated
      ? `Runs multi-threaded (up to ${Math.min(4, Math.max(2, navigator.hardwareConcurrency || 2))} threads), on this device’s processor.`
      : 'Runs single-threaded: this page is not cross-origin isolated, so it cannot share memory between threads (docs/hosting.md).';
    const working = !!this.busy || !!this.progress;
    return html`
      <label for="gguf">Model file (GGUF)</label>
      <input
        id="gguf"
        type="file"
        accept=".gguf"
        multiple
        ?disabled=${working}
        @change=${this.handlePick}
        aria-describedby="gguf-hint gguf-error"
      />
      <span class="hint" id="gguf-hint"
        >A .gguf file from your disk (the format KoboldCPP uses), kept in this browser and never
        uploaded; for a split model, choose all its parts. Small instruct models (0.5–2 GB) suit a
        browser. ${threads}</span
      >
      ${this.canDownload ? this.renderLink(working) : nothing} ${this.renderDownload()}
      ${this.busy ? html`<span class="hint" role="status">${this.busy}</span>` : nothing}
      <span class="hint error" id="gguf-error" role="alert">${this.error}</span>
      ${
        this.file
          ? html`<div class="row">
              <span class="name">${this.file.name}</span>
              <span>${keptLine(this.file)}</span>
              <button type="button" @click=${this.handleDelete} ?disabled=${working}>Delete</button>
            </div>`
          : this.name
            ? html`<span class="hint"
                >${this.name} is no longer in this browser: choose it again.</span
              >`
            : nothing
      }
      ${this.canDownload ? this.renderSuggested(working) : nothing}
    `;
  }

  private renderLink(working: boolean) {
    return html` <label class="link" for="gguf-link">Or download one from a link</label>
      <div class="row">
        <input
          id="gguf-link"
          type="url"
          inputmode="url"
          autocomplete="off"
          spellcheck="false"
          placeholder="https://huggingface.co/…/resolve/main/….gguf"
          .value=${this.link}
          ?disabled=${working}
          @input=${this.handleLink}
          @keydown=${this.handleLinkKey}
          aria-describedby="gguf-link-hint gguf-error"
        />
        <button
          type="button"
          @click=${this.handleDownload}
          ?disabled=${working || !this.link.trim()}
        >
          Download
        </button>
      </div>
      <span class="hint" id="gguf-link-hint"
        >The link of a .gguf file (on Hugging Face, the file’s download link); for a split model,
        its first part. It is checked before downloading, kept as it arrives, and resumes after a
        reload.</span
      >`;
  }

  private renderSuggested(working: boolean) {
    return html`<details>
      <summary>Suggested models</summary>
      <span class="hint"
        >Small instruct models that run in a browser. Sizes are the files’; memory and speed are
        rough, for a recent laptop with several threads.</span
      >
      <ul class="models">
        ${SUGGESTED_MODELS.map(
          (m) =>
            html`<li>
              <span class="what"
                ><span class="name">${m.name}</span>
                <span class="hint"
                  >${m.size} file · needs about ${m.memory} · ${m.speed}</span
                ></span
              >
              <button
                type="button"
                ?disabled=${working}
                aria-label=${`Use ${m.name}`}
                @click=${() => this.handleSuggested(m.url)}
              >
                Use
              </button>
            </li>`,
        )}
      </ul>
    </details>`;
  }

  private renderDownload() {
    if (this.progress) {
      const p = this.progress;
      return html`<div class="row">
          <span class="name">Downloading ${p.name}</span>
        </div>
        <div class="row">
          <progress
            max=${p.total || 1}
            .value=${p.done}
            aria-label=${`Download of ${p.name}`}
          ></progress>
          <span role="status">${progressLine(p)}</span>
          <button type="button" aria-label="Cancel the download" @click=${this.handleCancel}>
            Cancel
          </button>
        </div>`;
    }
    if (this.pending) {
      const p = this.pending;
      return html`<div class="row">
        <span
          >The download of <span class="name">${p.name}</span> stopped at ${progressLine(p)}.</span
        >
        <button type="button" @click=${this.handleResume} ?disabled=${!!this.busy}>Resume</button>
        <button
          type="button"
          aria-label="Cancel the download"
          @click=${this.handleCancel}
          ?disabled=${!!this.busy}
        >
          Cancel
        </button>
      </div>`;
    }
    return nothing;
  }

  private handleLink(e: Event): void {
    this.link = (e.target as HTMLInputElement).value;
  }

  private handleLinkKey(e: KeyboardEvent): void {
    if (e.key !== 'Enter') return;
    // Enter downloads; it must not reach the dialog's form (which would save it).
    e.preventDefault();
    if (this.link.trim() && !this.progress && !this.busy) void this.handleDownload();
  }

  private handleSuggested(url: string): void {
    this.link = url;
    this.error = '';
    void this.updateComplete.then(() =>
      this.renderRoot.querySelector<HTMLInputElement>('#gguf-link')?.focus(),
    );
  }

  private handleResume(): void {
    if (this.pending) void this.startDownload(this.pending.link);
  }

  private handleDownload(): Promise<void> {
    return this.startDownload(this.link.trim());
  }

  private startDownload(link: string): Promise<void> {
    const controller = new AbortController();
    this.download = controller;
    this.downloading = this.runDownload(link, controller);
    return this.downloading;
  }

  private async runDownload(link: string, controller: AbortController): Promise<void> {
    this.error = '';
    this.pending = undefined;
    this.busy = 'Checking the file at this link…';
    try {
      const kept = await downloadModel(link, {
        signal: controller.signal,
        onProgress: (p) => {
          if (this.download !== controller) return;
          this.busy = '';
          this.progress = { ...p };
        },
      });
      this.link = '';
      this.file = kept;
      this.name = kept.name;
      emit(this, 'sm-in-page-model', { name: kept.name });
    } catch (err) {
      if (!controller.signal.aborted) {
        this.error = err instanceof Error ? err.message : String(err);
      }
    } finally {
      // Cancelled (handleCancel took it away): Cancel shows what is left once it has discarded
      // the download; reading the stopped download here could show Resume for the one dropped.
      if (this.download === controller) {
        this.download = undefined;
        this.progress = undefined;
        this.busy = '';
        await this.refreshPending();
      }
    }
  }

  private async handleCancel(): Promise<void> {
    const running = this.download;
    this.download = undefined;
    running?.abort();
    this.progress = undefined;
    this.busy = 'Cancelling the download…';
    try {
      // The aborted download stops writing before what it kept is dropped.
      if (running) await this.downloading;
      await discardDownload();
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.busy = '';
      this.pending = undefined;
    }
  }

  private async handlePick(e: Event): Promise<void> {
    const input = e.target as HTMLInputElement;
    const picked = [...(input.files ?? [])];
    if (!picked.length) return;
    this.error = '';
    this.busy = `Keeping ${picked.length > 1 ? `${picked.length} parts of ${picked[0].name}` : picked[0].name} in this browser…`;
    try {
      const kept = await saveModelFiles(picked);
      this.file = kept;
      this.name = kept.name;
      emit(this, 'sm-in-page-model', { name: kept.name });
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.busy = '';
      input.value = '';
    }
  }

  private async handleDelete(): Promise<void> {
    if (!this.file) return;
    this.busy = `Deleting ${this.file.name}…`;
    try {
      await deleteModelFile(this.file.name);
      this.file = undefined;
      this.name = '';
      emit(this, 'sm-in-page-model', { name: '' });
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.busy = '';
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-in-page-model': SmInPageModel;
  }
}
