// The Settings dialog: edits a copy of AppSettings, validates it, and hands it up on Save.
import { LitElement, css, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { DEFAULT_SETTINGS, type AppSettings } from '../app/settings';
import { emit } from './events';
import { base, tokens } from './styles';

export interface SaveSettingsDetail {
  settings: AppSettings;
}

declare module './events' {
  interface SmEvents {
    /** The user saved the Settings dialog. */
    'sm-save-settings': SaveSettingsDetail;
  }
}

/** The number fields, as typed (strings), so a half-typed value is not lost or coerced. */
type NumberField =
  'temperature' | 'maxOutputTokens' | 'contextSize' | 'recencyBias' | 'contextTokens';

interface NumberRule {
  min: number;
  max: number;
  integer: boolean;
  step: string;
  message: string;
}

const RULES: Record<NumberField, NumberRule> = {
  temperature: {
    min: 0,
    max: 2,
    integer: false,
    step: '0.05',
    message: 'Use a number from 0 to 2.',
  },
  maxOutputTokens: {
    min: 1,
    max: 65536,
    integer: true,
    step: '1',
    message: 'Use a whole number from 1 to 65536.',
  },
  contextSize: {
    min: 0,
    max: 1_048_576,
    integer: true,
    step: '256',
    message: 'Use 0 (the server’s size) or a whole number up to 1048576.',
  },
  recencyBias: {
    min: 0,
    max: 1,
    integer: false,
    step: '0.05',
    message: 'Use a number from 0 (similarity only) to 1 (newest first).',
  },
  contextTokens: {
    min: 0,
    max: 4000,
    integer: true,
    step: '50',
    message: 'Use a whole number from 0 to 4000.',
  },
};

/** Smallest context override that leaves room for a prompt. */
const MIN_CONTEXT = 512;

type Draft = Omit<AppSettings, NumberField> & Record<NumberField, string>;
type Errors = Partial<Record<keyof AppSettings, string>>;

function toDraft(s: AppSettings): Draft {
  return {
    ...s,
    temperature: String(s.temperature),
    maxOutputTokens: String(s.maxOutputTokens),
    contextSize: String(s.contextSize),
    recencyBias: String(s.recencyBias),
    contextTokens: String(s.contextTokens),
  };
}

/** Validates the draft: the settings, or a message per bad field. */
export function validateSettings(
  draft: Draft,
): { ok: true; settings: AppSettings } | { ok: false; errors: Errors } {
  const errors: Errors = {};
  const endpoint = draft.endpoint.trim();
  try {
    const url = new URL(endpoint);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
  } catch {
    errors.endpoint =
      'Enter the server’s full address, starting with http:// or https:// (for example http://localhost:5001).';
  }
  const numbers = {} as Record<NumberField, number>;
  for (const field of Object.keys(RULES) as NumberField[]) {
    const rule = RULES[field];
    const raw = draft[field].trim();
    const n = Number(raw);
    if (
      raw === '' ||
      !Number.isFinite(n) ||
      n < rule.min ||
      n > rule.max ||
      (rule.integer && !Number.isInteger(n))
    ) {
      errors[field] = rule.message;
    } else {
      numbers[field] = n;
    }
  }
  if (numbers.contextSize !== undefined && numbers.contextSize > 0) {
    if (numbers.contextSize < MIN_CONTEXT) {
      errors.contextSize = `Use 0 (the server’s size) or at least ${MIN_CONTEXT} tokens.`;
    }
  }
  if (Object.keys(errors).length) return { ok: false, errors };
  return { ok: true, settings: { ...draft, ...numbers, endpoint } };
}

/**
 * `<sm-settings>`: the Settings dialog (a modal `<dialog>`).
 *
 * The app opens it with `open()`; it edits a copy of `settings`, so Cancel (or Escape) leaves
 * everything as it was. Save validates every field (the message shows under the field) and, if
 * all are valid, emits the new settings and closes. While `reembed` is set, a progress bar shows
 * the re-embedding of memory after an embedding-model change.
 *
 * @fires sm-save-settings - Save with valid values; `detail.settings` is the complete AppSettings.
 */
@customElement('sm-settings')
export class SmSettings extends LitElement {
  static override styles = [
    tokens,
    base,
    css`
      dialog {
        width: min(560px, calc(100vw - 24px));
        max-height: calc(100dvh - 24px);
        padding: 0;
        border: 1px solid var(--sm-border);
        border-radius: 10px;
        background: var(--sm-surface);
        color: var(--sm-text);
        box-shadow: 0 12px 40px rgb(20 30 50 / 25%);
      }
      dialog::backdrop {
        background: rgb(20 30 50 / 35%);
      }
      form {
        display: flex;
        flex-direction: column;
        max-height: calc(100dvh - 26px);
      }
      .head,
      .foot {
        padding: 14px 20px;
      }
      .head {
        border-bottom: 1px solid var(--sm-surface-2);
      }
      h2 {
        margin: 0;
        font-size: 1.15rem;
      }
      .body {
        overflow: auto;
        padding: 4px 20px 12px;
      }
      fieldset {
        margin: 12px 0 0;
        padding: 0;
        border: none;
      }
      legend {
        padding: 0;
        margin-bottom: 6px;
        font-size: 0.75rem;
        font-weight: 600;
        letter-spacing: 0.05em;
        text-transform: uppercase;
        color: var(--sm-muted);
      }
      .grid {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(150px, 1fr));
        gap: 10px 12px;
      }
      .field {
        display: flex;
        flex-direction: column;
        gap: 3px;
        margin-bottom: 10px;
      }
      .grid .field {
        margin-bottom: 0;
      }
      .field > label {
        font-size: 0.875rem;
        font-weight: 600;
      }
      .field input,
      .field select,
      .field textarea {
        width: 100%;
      }
      textarea {
        resize: vertical;
        min-height: 4.5em;
      }
      .check {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 2px 8px;
        margin: 4px 0 12px;
        font-size: 0.9rem;
      }
      .check input {
        margin: 0;
      }
      .check .hint {
        flex-basis: 100%;
        padding-left: 21px;
      }
      /* Label, input and message rows line up across the columns, whatever wraps. */
      .grid .field {
        display: grid;
        grid-row: span 3;
        grid-template-rows: subgrid;
        row-gap: 3px;
      }
      .grid .field > label {
        align-self: end;
      }
      .hint {
        font-size: 0.8rem;
        color: var(--sm-muted);
      }
      .field-error {
        font-size: 0.8rem;
        color: var(--sm-danger);
      }
      [aria-invalid='true'] {
        border-color: var(--sm-danger);
      }
      progress {
        width: 100%;
      }
      .foot [role='alert'] {
        margin-right: auto;
        font-size: 0.85rem;
        color: var(--sm-danger);
      }
      .foot {
        display: flex;
        align-items: center;
        justify-content: flex-end;
        gap: 8px;
        border-top: 1px solid var(--sm-surface-2);
      }
    `,
  ];

  /** The current settings; the dialog edits a copy taken when it opens. */
  @property({ attribute: false }) settings: AppSettings | undefined;

  /** Re-embedding progress to show, while the memory is being re-embedded. */
  @property({ attribute: false }) reembed: { done: number; total: number } | undefined;

  @state() private draft: Draft | undefined;
  @state() private errors: Errors = {};

  @query('dialog') private dialog!: HTMLDialogElement;

  /** Opens the dialog on a fresh copy of `settings` (the defaults if none were given). */
  async open(): Promise<void> {
    this.draft = toDraft(this.settings ?? DEFAULT_SETTINGS);
    this.errors = {};
    await this.updateComplete;
    if (!this.dialog.open) this.dialog.showModal();
  }

  /** Closes the dialog without saving. */
  close(): void {
    this.dialog?.close();
  }

  /** Whether the dialog is showing. */
  get isOpen(): boolean {
    return this.dialog?.open ?? false;
  }

  override render() {
    const d = this.draft;
    return html`<dialog aria-labelledby="settings-title" @close=${this.handleClosed}>
      ${
        d
          ? html`<form novalidate @submit=${this.handleSubmit}>
              <div class="head"><h2 id="settings-title">Settings</h2></div>
              <div class="body">
                <fieldset>
                  <legend>Server</legend>
                  ${this.field(
                    'endpoint',
                    'Endpoint URL',
                    html`<input
                      id="endpoint"
                      type="url"
                      inputmode="url"
                      autocomplete="url"
                      spellcheck="false"
                      .value=${d.endpoint}
                      @input=${this.text('endpoint')}
                      aria-invalid=${this.errors.endpoint ? 'true' : 'false'}
                      aria-describedby="endpoint-hint endpoint-error"
                    />`,
                    'KoboldCPP, llama.cpp, Ollama or any OpenAI-compatible server.',
                  )}
                  ${this.field(
                    'apiKey',
                    'API key / password',
                    html`<input
                      id="apiKey"
                      type="password"
                      autocomplete="off"
                      .value=${d.apiKey}
                      @input=${this.text('apiKey')}
                      aria-describedby="apiKey-hint"
                    />`,
                    'Only if the server asks for one. Kept in this browser.',
                  )}
                  ${this.field(
                    'toolMode',
                    'Tool mode',
                    html`<select
                      id="toolMode"
                      .value=${d.toolMode}
                      @change=${this.handleToolMode}
                      aria-describedby="toolMode-hint"
                    >
                      <option value="auto" ?selected=${d.toolMode === 'auto'}>Auto</option>
                      <option value="native" ?selected=${d.toolMode === 'native'}>Native</option>
                      <option value="prompted" ?selected=${d.toolMode === 'prompted'}>
                        Prompted
                      </option>
                    </select>`,
                    'Native uses the server’s tool calls; prompted describes the tools in the prompt.',
                  )}
                </fieldset>
                <fieldset>
                  <legend>Generation</legend>
                  <div class="grid">
                    ${this.numberField('temperature', 'Temperature')}
                    ${this.numberField('maxOutputTokens', 'Max output tokens')}
                    ${this.numberField('contextSize', 'Context size (0 = from server)')}
                  </div>
                </fieldset>
                <fieldset>
                  <legend>Memory</legend>
                  ${this.checkbox(
                    'autoRecall',
                    'Auto-recall',
                    'Adds related memories to each prompt.',
                  )}
                  <div class="grid">
                    ${this.numberField('recencyBias', 'Default recency bias')}
                    ${this.numberField('contextTokens', 'Default context tokens')}
                  </div>
                  ${this.checkbox(
                    'extraTools',
                    'Let the model edit and move entries',
                    'Offers updateMemory and moveMemory as tools.',
                  )}
                  ${this.field(
                    'embeddingModel',
                    'Embedding model',
                    html`<select
                      id="embeddingModel"
                      .value=${d.embeddingModel}
                      @change=${this.handleEmbeddingModel}
                      aria-describedby="embeddingModel-hint"
                    >
                      <option value="default" ?selected=${d.embeddingModel === 'default'}>
                        all-MiniLM-L6-v2 (download)
                      </option>
                      <option value="bundled" ?selected=${d.embeddingModel === 'bundled'}>
                        Bundled offline model
                      </option>
                    </select>`,
                    'Changing it re-embeds all memory in the background.',
                  )}
                  ${this.reembed ? this.renderReembed(this.reembed) : nothing}
                </fieldset>
                <fieldset>
                  <legend>Persona</legend>
                  ${this.field(
                    'persona',
                    'Persona prompt',
                    html`<textarea
                      id="persona"
                      rows="4"
                      .value=${d.persona}
                      @input=${this.text('persona')}
                      aria-describedby="persona-hint"
                    ></textarea>`,
                    'Who the assistant is; added before the memory instructions.',
                  )}
                </fieldset>
              </div>
              <div class="foot">
                <span role="alert">${this.errorSummary()}</span>
                <button type="button" @click=${this.close}>Cancel</button>
                <button type="submit" class="primary">Save</button>
              </div>
            </form>`
          : nothing
      }
    </dialog>`;
  }

  private renderReembed(p: { done: number; total: number }) {
    return html`<div class="field">
      <label for="reembed-progress" class="hint">
        Re-embedding memory: ${p.done} of ${p.total}
      </label>
      <progress id="reembed-progress" max=${Math.max(p.total, 1)} value=${p.done}></progress>
    </div>`;
  }

  private field(
    key: keyof AppSettings,
    label: string,
    control: TemplateResult,
    hint?: string,
  ): TemplateResult {
    const error = this.errors[key];
    return html`<div class="field">
      <label for=${key}>${label}</label>
      ${control} ${hint ? html`<span class="hint" id="${key}-hint">${hint}</span>` : nothing}
      <span class="field-error" id="${key}-error">${error ?? ''}</span>
    </div>`;
  }

  private checkbox(key: 'autoRecall' | 'extraTools', label: string, hint: string) {
    return html`<div class="check">
      <input
        id=${key}
        type="checkbox"
        .checked=${this.draft?.[key] ?? false}
        @change=${this.flag(key)}
        aria-describedby="${key}-hint"
      />
      <label for=${key}>${label}</label>
      <span class="hint" id="${key}-hint">${hint}</span>
    </div>`;
  }

  private numberField(key: NumberField, label: string): TemplateResult {
    const rule = RULES[key];
    const error = this.errors[key];
    return html`<div class="field">
      <label for=${key}>${label}</label>
      <input
        id=${key}
        type="number"
        inputmode=${rule.integer ? 'numeric' : 'decimal'}
        min=${rule.min}
        max=${rule.max}
        step=${rule.step}
        .value=${this.draft?.[key] ?? ''}
        @input=${this.text(key)}
        aria-invalid=${error ? 'true' : 'false'}
        aria-describedby="${key}-error"
      />
      <span class="field-error" id="${key}-error">${error ?? ''}</span>
    </div>`;
  }

  /** Input handler that copies the control's value into a text field of the draft. */
  private text(key: NumberField | 'endpoint' | 'apiKey' | 'persona') {
    return (e: Event) => {
      if (!this.draft) return;
      const value = (e.target as HTMLInputElement | HTMLTextAreaElement).value;
      this.draft = { ...this.draft, [key]: value };
      if (this.errors[key]) this.errors = { ...this.errors, [key]: undefined };
    };
  }

  private flag(key: 'autoRecall' | 'extraTools') {
    return (e: Event) => {
      if (!this.draft) return;
      this.draft = { ...this.draft, [key]: (e.target as HTMLInputElement).checked };
    };
  }

  private handleToolMode(e: Event): void {
    const value = (e.target as HTMLSelectElement).value;
    if (this.draft && (value === 'auto' || value === 'native' || value === 'prompted')) {
      this.draft = { ...this.draft, toolMode: value };
    }
  }

  private handleEmbeddingModel(e: Event): void {
    const value = (e.target as HTMLSelectElement).value;
    if (this.draft && (value === 'default' || value === 'bundled')) {
      this.draft = { ...this.draft, embeddingModel: value };
    }
  }

  private errorSummary(): string {
    const n = Object.values(this.errors).filter(Boolean).length;
    return n ? `Check the ${n === 1 ? 'highlighted field' : `${n} highlighted fields`}.` : '';
  }

  private handleSubmit(e: Event): void {
    e.preventDefault();
    if (!this.draft) return;
    const result = validateSettings(this.draft);
    if (!result.ok) {
      this.errors = result.errors;
      void this.updateComplete.then(() =>
        this.renderRoot.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus(),
      );
      return;
    }
    emit(this, 'sm-save-settings', { settings: result.settings });
    this.close();
  }

  private handleClosed(): void {
    this.errors = {};
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-settings': SmSettings;
  }
  interface GlobalEventHandlersEventMap {
    'sm-save-settings': CustomEvent<SaveSettingsDetail>;
  }
}
