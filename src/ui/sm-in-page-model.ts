// <sm-in-page-model>: Settings → Server, "In this browser": the GGUF model file kept in this
// browser (chosen from disk, never uploaded), its size, Delete, and whether it runs on one
// thread or several. docs/in-page-model.md.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { formatBytes } from '../app/storage-status';
import {
  deleteModelFile,
  describeModelFile,
  saveModelFile,
  type ModelFile,
} from '../llm/in-page/model-files';
import { emit } from './events';
import { base, tokens } from './styles';

/**
 * The in-page model's file: a file picker (`.gguf`), then the kept file's name and size with a
 * Delete button. A file that cannot run here is refused in a sentence and nothing is kept.
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
      input[type='file'] {
        max-width: 100%;
      }
      .kept {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 8px;
        margin: 6px 0;
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
    `,
  ];

  /** The kept file's name ('' for none). */
  @property() name = '';

  @state() private file: ModelFile | undefined;
  @state() private busy = '';
  @state() private error = '';

  override updated(changed: Map<string, unknown>): void {
    if (changed.has('name')) void this.refresh();
  }

  private async refresh(): Promise<void> {
    this.file = this.name ? await describeModelFile(this.name) : undefined;
  }

  override render() {
    const threads = crossOriginIsolated
      ? `Runs multi-threaded (up to ${Math.min(4, Math.max(2, navigator.hardwareConcurrency || 2))} threads), on this device’s processor.`
      : 'Runs single-threaded: this page is not cross-origin isolated, so it cannot share memory between threads (docs/hosting.md).';
    return html`
      <label for="gguf">Model file (GGUF)</label>
      <input
        id="gguf"
        type="file"
        accept=".gguf"
        ?disabled=${!!this.busy}
        @change=${this.handlePick}
        aria-describedby="gguf-hint gguf-error"
      />
      <span class="hint" id="gguf-hint"
        >A .gguf file from your disk (the format KoboldCPP uses), kept in this browser and never
        uploaded. Small instruct models (0.5–4 GB) suit a browser. ${threads}</span
      >
      ${this.busy ? html`<span class="hint" role="status">${this.busy}</span>` : nothing}
      ${
        this.file
          ? html`<div class="kept">
              <span class="name">${this.file.name}</span>
              <span>${formatBytes(this.file.bytes)}, kept in this browser</span>
              <button type="button" @click=${this.handleDelete} ?disabled=${!!this.busy}>
                Delete
              </button>
            </div>`
          : this.name
            ? html`<span class="hint"
                >${this.name} is no longer in this browser: choose it again.</span
              >`
            : nothing
      }
      <span class="hint error" id="gguf-error" role="alert">${this.error}</span>
    `;
  }

  private async handlePick(e: Event): Promise<void> {
    const input = e.target as HTMLInputElement;
    const picked = input.files?.[0];
    if (!picked) return;
    this.error = '';
    this.busy = `Keeping ${picked.name} in this browser…`;
    try {
      const kept = await saveModelFile(picked);
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
