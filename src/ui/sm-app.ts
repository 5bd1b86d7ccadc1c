// The app shell. For now a placeholder: it shows the active embedding model and saves or reads
// one memory entry through the worker, until the full UI replaces it.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { proxy } from 'comlink';
import type { EmbedderProgress, ModelInfo } from '../embeddings/types';
import type { MemoryClient } from '../worker-client';

/**
 * `<sm-app>`: the root element of Structured Memory.
 *
 * Placeholder form: Path and Content (JSON, or plain text when it is not JSON), Save and Read,
 * and the tool result as JSON text. Everything is rendered as text through Lit templates.
 */
@customElement('sm-app')
export class SmApp extends LitElement {
  static override styles = css`
    :host {
      display: block;
      max-width: 48rem;
      margin: 0 auto;
      padding: 1rem;
      font:
        16px/1.5 system-ui,
        sans-serif;
      color: var(--sm-text, #1d2330);
    }
    h1 {
      font-size: 1.4rem;
      margin: 0 0 0.25rem;
    }
    .model {
      margin: 0 0 1rem;
      color: var(--sm-muted, #4b5565);
    }
    .notice {
      margin: -0.75rem 0 1rem;
      font-size: 0.875rem;
      color: var(--sm-muted, #4b5565);
    }
    .error {
      color: var(--sm-error, #b3261e);
    }
    form {
      display: grid;
      gap: 0.5rem;
    }
    label {
      display: grid;
      gap: 0.25rem;
      font-weight: 600;
    }
    input,
    textarea {
      font:
        14px/1.4 ui-monospace,
        monospace;
      padding: 0.4rem;
      border: 1px solid #9aa3b2;
      border-radius: 4px;
    }
    .actions {
      display: flex;
      gap: 0.5rem;
    }
    button {
      font: inherit;
      padding: 0.3rem 1rem;
    }
    output {
      display: block;
      margin-top: 1rem;
      min-height: 4rem;
      padding: 0.5rem;
      white-space: pre-wrap;
      overflow-wrap: anywhere;
      font:
        13px/1.4 ui-monospace,
        monospace;
      background: var(--sm-code-bg, #f3f4f7);
      border-radius: 4px;
    }
  `;

  /** The memory engine in the worker; set by the composition root. */
  @property({ attribute: false }) memory?: MemoryClient;

  /** Set when the worker itself failed; shown instead of the model line. */
  @property({ attribute: false }) workerError = '';

  @state() private model?: ModelInfo;
  @state() private modelStatus = 'Starting the memory worker…';
  @state() private modelError = '';
  /** Why the chosen model is not the active one (the fallback notice), if so. */
  @state() private modelNotice = '';
  @state() private busy = false;
  @state() private output = '';

  private path = '';
  private content = '';

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('memory') && this.memory) void this.loadModel(this.memory);
  }

  override render() {
    return html`
      <h1>Structured Memory</h1>
      ${this.renderModel()}
      <form @submit=${this.handleSave}>
        <label>
          Path
          <input
            name="path"
            required
            placeholder="HaloWeave/Goals/Phase1"
            @input=${this.handlePathInput}
          />
        </label>
        <label>
          Content
          <textarea
            name="content"
            rows="5"
            placeholder='{"goal": "ship the prototype"} or plain text'
            @input=${this.handleContentInput}
          ></textarea>
        </label>
        <div class="actions">
          <button type="submit" ?disabled=${this.busy || !this.memory}>Save</button>
          <button type="button" ?disabled=${this.busy || !this.memory} @click=${this.handleRead}>
            Read
          </button>
        </div>
      </form>
      <output aria-live="polite" aria-label="Result">${this.output}</output>
    `;
  }

  private renderModel() {
    if (this.workerError) return html`<p class="model error">${this.workerError}</p>`;
    if (this.modelError) return html`<p class="model error">${this.modelError}</p>`;
    if (!this.model) return html`<p class="model">${this.modelStatus}</p>`;
    const { id, dims, bundled } = this.model;
    return html`<p class="model" data-model=${id}>
        Embedding model: <strong>${id}</strong> (${dims}
        dimensions${bundled ? ', bundled, offline' : nothing})
      </p>
      ${this.modelNotice ? html`<p class="notice">${this.modelNotice}</p>` : nothing}`;
  }

  private async loadModel(memory: MemoryClient): Promise<void> {
    this.modelStatus = 'Loading the embedding model…';
    try {
      await memory.onModelProgress(proxy((progress) => this.showProgress(progress)));
      this.model = await memory.modelInfo();
    } catch (error) {
      this.modelError = `The embedding model could not be loaded: ${errorMessage(error)}`;
    }
  }

  private showProgress(progress: EmbedderProgress): void {
    if (progress.status === 'fallback' && progress.message) this.modelNotice = progress.message;
    if (this.model) return;
    const percent =
      progress.progress === undefined ? '' : ` ${Math.round(progress.progress * 100)}%`;
    this.modelStatus = `Loading the embedding model (${progress.message ?? progress.status}${percent})…`;
  }

  private handlePathInput(event: InputEvent): void {
    this.path = (event.target as HTMLInputElement).value;
  }

  private handleContentInput(event: InputEvent): void {
    this.content = (event.target as HTMLTextAreaElement).value;
  }

  private handleSave(event: SubmitEvent): void {
    event.preventDefault();
    const memory = this.memory;
    if (!memory) return;
    void this.run(() => memory.saveMemory(this.path, parseContent(this.content)));
  }

  private handleRead(): void {
    const memory = this.memory;
    if (!memory) return;
    void this.run(() => memory.queryMemory(this.path));
  }

  /** Runs one call and shows its result; this is a top-level handler, so it catches. */
  private async run(call: () => Promise<unknown>): Promise<void> {
    this.busy = true;
    try {
      this.output = JSON.stringify(await call(), null, 2);
    } catch (error) {
      this.output = JSON.stringify({ status: 'ERROR', message: errorMessage(error) }, null, 2);
    } finally {
      this.busy = false;
    }
  }
}

/** JSON when it parses, else the text itself (the engine validates either). */
function parseContent(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-app': SmApp;
  }
}
