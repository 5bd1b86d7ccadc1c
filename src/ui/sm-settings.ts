// The Settings dialog: edits a copy of AppSettings, says in one line what each setting does,
// validates it, tests the connection to the server, and hands the settings up on Save.
import { deepActiveElement } from './focus';
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import {
  DEFAULT_SETTINGS,
  type AppSettings,
  type ConnectionReport,
  type ConnectionTest,
} from '../app/settings';
import { emit } from './events';
import { base, tokens } from './styles';
import './sm-sync-settings';
import type { SmSyncSettings, SyncClient } from './sm-sync-settings';
import { embeddingThreads } from '../embeddings/threads';
import { settingsStyles } from './sm-settings.styles';
import type { Backups } from '../app/backups';
import { KEEP_CHOICES } from '../app/backup-plan';
import './sm-backup-panel';
import './sm-in-page-model';
import { IN_PAGE_AVAILABLE } from '../llm/in-page/connector';

export interface SaveSettingsDetail {
  settings: AppSettings;
}

/** The server typed in the dialog, to test; the listener answers in `reply`. */
export interface TestConnectionDetail extends ConnectionTest {
  /** Set by the listener, synchronously: the report to show. */
  reply?: Promise<ConnectionReport>;
}

declare module './events' {
  interface SmEvents {
    /** The user saved the Settings dialog. */
    'sm-save-settings': SaveSettingsDetail;
    /** The user asked to test the connection to the server typed in the dialog. */
    'sm-test-connection': TestConnectionDetail;
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
  /** What the setting does, in one line of plain words. */
  hint: string;
  /** What to type instead, when the value is out of range. */
  message: string;
}

const RULES: Record<NumberField, NumberRule> = {
  temperature: {
    min: 0,
    max: 2,
    integer: false,
    step: '0.05',
    hint: 'How freely the model picks its words (0 = the same answer each time, 1 = varied, 2 = erratic).',
    message: 'Use a number from 0 to 2 (0.7 suits most models).',
  },
  maxOutputTokens: {
    min: 1,
    max: 65536,
    integer: true,
    step: '1',
    hint: 'The longest answer the model may write, in tokens (a token is about ¾ of a word).',
    message: 'Use a whole number from 1 to 65536 (512 suits chat).',
  },
  contextSize: {
    min: 0,
    max: 1_048_576,
    integer: true,
    step: '256',
    hint: 'How much text the model reads at once, in tokens; 0 = what the server says.',
    message: 'Use 0 (the server’s size) or a whole number from 512 to 1048576.',
  },
  recencyBias: {
    min: 0,
    max: 1,
    integer: false,
    step: '0.05',
    hint: 'How much newer memories are preferred over better matches (0 = best match only, 1 = newest first).',
    message: 'Use a number from 0 (best match only) to 1 (newest first).',
  },
  contextTokens: {
    min: 0,
    max: 4000,
    integer: true,
    step: '50',
    hint: 'How much of the chat is kept with each new memory to say why it was saved, in tokens (0 = none).',
    message: 'Use a whole number from 0 to 4000 (1000 keeps a few sentences).',
  },
};

/** The settings that are a checkbox. */
type Flag = 'autoRecall' | 'extraTools' | 'memoryKeeper' | 'backupReminder';

/** Smallest context override that leaves room for a prompt. */
const MIN_CONTEXT = 512;

/** The thread sentence's terms in plain words, said before it. */
const THREADS_PLAIN =
  'Threads are processor cores working at once, which makes search by meaning faster. ' +
  'Browsers allow them only to a page in a stricter safe mode, called “cross-origin isolated”, which the app’s web server or its offline helper (the service worker) switches on.';

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

/** What is wrong with an endpoint as typed, or undefined when it is a usable http(s) address. */
export function endpointProblem(endpoint: string): string | undefined {
  try {
    const url = new URL(endpoint.trim());
    if (url.protocol === 'http:' || url.protocol === 'https:') return undefined;
  } catch {
    // not a URL at all
  }
  return 'Enter the server’s full address, starting with http:// or https:// (for example http://localhost:5001).';
}

/** Validates the draft: the settings, or a message per bad field. */
export function validateSettings(
  draft: Draft,
): { ok: true; settings: AppSettings } | { ok: false; errors: Errors } {
  const errors: Errors = {};
  const endpoint = draft.endpoint.trim();
  const problem = draft.modelSource === 'server' ? endpointProblem(endpoint) : undefined;
  if (problem) errors.endpoint = problem;
  if (draft.modelSource === 'inpage' && !draft.inPageModel) {
    errors.inPageModel = 'Choose a GGUF model file, or choose A model server.';
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

/** Test connection in progress or done, for the endpoint and key it was run with. */
type TestState =
  { state: 'testing'; endpoint: string } | ({ state: 'done'; endpoint: string } & ConnectionReport);

/**
 * `<sm-settings>`: the Settings dialog (a modal `<dialog>`).
 *
 * The app opens it with `open()`; it edits a copy of `settings`, so Cancel (or Escape) leaves
 * everything as it was, and focus goes back to where it was. Each setting has a one-line hint
 * in plain words, and its range on the input. Save validates every field (the message shows
 * under the field) and, if all are valid, emits the new settings and closes. Test connection
 * asks the app (`sm-test-connection`) about the server typed in, and shows what answers, one
 * line a fact, or the sentence with the fix. While `reembed` is set, a progress bar shows the
 * re-embedding of memory after an embedding-model change.
 *
 * @fires sm-save-settings - Save with valid values; `detail.settings` is the complete AppSettings.
 * @fires sm-test-connection - Test connection; the listener sets `detail.reply`.
 */
@customElement('sm-settings')
export class SmSettings extends LitElement {
  static override styles = [tokens, base, settingsStyles];

  /** The current settings; the dialog edits a copy taken when it opens. */
  @property({ attribute: false }) settings: AppSettings | undefined;

  /** Re-embedding progress to show, while the memory is being re-embedded. */
  @property({ attribute: false }) reembed: { done: number; total: number } | undefined;

  /** The embedding model in use, in words (shown under the choice), when known. */
  @property({ attribute: false }) modelInUse: string | undefined;

  /** The worker's sync API, for the Sync section. */
  @property({ attribute: false }) syncClient: SyncClient | undefined;

  /** The page's backups and storage, for the Data section. */
  @property({ attribute: false }) backups: Backups | undefined;

  @state() private draft: Draft | undefined;
  @state() private errors: Errors = {};
  @state() private test: TestState | undefined;

  @query('dialog') private dialog!: HTMLDialogElement;

  /** Where focus was when the dialog opened: it goes back there on close. */
  private opener: HTMLElement | undefined;
  private testController: AbortController | undefined;

  /**
   * Opens the dialog on a fresh copy of `settings` (the defaults if none were given);
   * `focus: 'endpoint'` puts the cursor in the Endpoint URL field, `'data'` shows the Data
   * section (storage and backups) with focus on its first button.
   */
  async open(options: { focus?: 'endpoint' | 'data' } = {}): Promise<void> {
    if (!this.dialog?.open) this.opener = deepActiveElement();
    this.draft = toDraft(this.settings ?? DEFAULT_SETTINGS);
    this.errors = {};
    this.stopTest();
    void this.renderRoot.querySelector<SmSyncSettings>('sm-sync-settings')?.reload();
    // What the browser says now: usage grows with memory, and it may keep memory by now.
    void this.backups?.refreshStorage();
    await this.updateComplete;
    if (!this.dialog.open) this.dialog.showModal();
    if (options.focus === 'endpoint') {
      const input = this.renderRoot.querySelector<HTMLInputElement>('#endpoint');
      input?.focus();
      input?.select();
    } else if (options.focus === 'data') {
      const panel = this.renderRoot.querySelector('sm-backup-panel');
      await panel?.updateComplete;
      this.renderRoot.querySelector('#data')?.scrollIntoView({ block: 'start' });
      panel?.shadowRoot?.querySelector<HTMLButtonElement>('button')?.focus();
    }
  }

  /** Closes the dialog without saving. */
  close(): void {
    this.dialog?.close();
  }

  /** Whether the dialog is showing. */
  get isOpen(): boolean {
    return this.dialog?.open ?? false;
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.stopTest();
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
                    'modelSource',
                    'Where the model runs',
                    html`<select
                      id="modelSource"
                      .value=${d.modelSource}
                      @change=${this.handleModelSource}
                      aria-describedby="modelSource-hint"
                    >
                      <option value="server" ?selected=${d.modelSource === 'server'}>
                        A model server
                      </option>
                      ${
                        IN_PAGE_AVAILABLE
                          ? html`<option value="inpage" ?selected=${d.modelSource === 'inpage'}>
                              In this browser
                            </option>`
                          : nothing
                      }
                    </select>`,
                    'A model server (KoboldCPP, llama.cpp, Ollama…) runs on your computer or network; In this browser runs a GGUF model inside this page, with no server at all (slower, small models only).',
                  )}
                  ${d.modelSource === 'inpage' ? this.renderInPage(d) : this.renderServer(d)}
                </fieldset>
                <fieldset>
                  <legend>Generation</legend>
                  <div class="grid">
                    ${this.numberField('temperature', 'Temperature')}
                    ${this.numberField('maxOutputTokens', 'Max output tokens')}
                    ${this.numberField('contextSize', 'Context size')}
                  </div>
                </fieldset>
                <fieldset>
                  <legend>Memory</legend>
                  ${this.checkbox(
                    'autoRecall',
                    'Auto-recall',
                    'Before each answer, adds the few memories most related to your message to the prompt.',
                  )}
                  ${this.checkbox(
                    'memoryKeeper',
                    'Memory keeper',
                    'After an exchange in which the model saved nothing, asks your model, once the chat is idle, what to remember from it. Costs one extra generation each time; off, nothing is sent or saved.',
                  )}
                  <div class="grid">
                    ${this.numberField('recencyBias', 'Default recency bias')}
                    ${this.numberField('contextTokens', 'Default context tokens')}
                  </div>
                  ${this.checkbox(
                    'extraTools',
                    'Let the model edit and move entries',
                    'Lets the model also change part of an entry and move or rename entries, not only save, read and delete them. To the model these are the updateMemory and moveMemory tools.',
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
                        all-MiniLM-L6-v2 (downloaded once)
                      </option>
                      <option value="bundled" ?selected=${d.embeddingModel === 'bundled'}>
                        Bundled offline model
                      </option>
                    </select>`,
                    'Turns text into numbers for search by meaning; changing it re-embeds all memory in the background.' +
                      (this.modelInUse ? ` In use now: ${this.modelInUse}.` : '') +
                      (d.embeddingModel === 'bundled'
                        ? ' The bundled model is a word table: it needs no neural runtime and no threads.'
                        : ` ${THREADS_PLAIN} ${embeddingThreads().sentence}`),
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
                    'Who the assistant is and how it talks; added before the memory instructions.',
                  )}
                </fieldset>
                <fieldset id="data">
                  <legend>Data</legend>
                  <sm-backup-panel .backups=${this.backups}></sm-backup-panel>
                  ${this.checkbox(
                    'backupReminder',
                    'Remind me to back up',
                    'A short line when memory has changed and nothing was exported, backed up or synced for a week.',
                  )}
                  <div class="grid">
                    ${this.field(
                      'autoBackup',
                      'Automatic backup',
                      html`<select
                        id="autoBackup"
                        .value=${d.autoBackup}
                        @change=${this.handleAutoBackup}
                        aria-describedby="autoBackup-hint"
                      >
                        <option value="off" ?selected=${d.autoBackup === 'off'}>Off</option>
                        <option value="daily" ?selected=${d.autoBackup === 'daily'}>Daily</option>
                        <option value="weekly" ?selected=${d.autoBackup === 'weekly'}>
                          Weekly
                        </option>
                      </select>`,
                      'While the app is open, a JSON backup (Import restores it) when memory has changed.',
                    )}
                    ${
                      this.backups?.state.folderSupported === false
                        ? nothing
                        : this.field(
                            'backupKeep',
                            'Backups kept in the folder',
                            html`<select
                              id="backupKeep"
                              .value=${String(d.backupKeep)}
                              @change=${this.handleBackupKeep}
                              aria-describedby="backupKeep-hint"
                            >
                              ${KEEP_CHOICES.map(
                                (n) =>
                                  html`<option value=${n} ?selected=${d.backupKeep === n}>
                                    ${n}
                                  </option>`,
                              )}
                            </select>`,
                            'The newest automatic backups stay; older ones the app wrote there are deleted.',
                          )
                    }
                  </div>
                </fieldset>
                <fieldset>
                  <legend>Sync</legend>
                  <sm-sync-settings .client=${this.syncClient}></sm-sync-settings>
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

  private renderTest() {
    const t = this.test;
    // Only a result for the address now in the field (a new address hides the old result).
    const current = t && this.draft && t.endpoint === this.draft.endpoint.trim() ? t : undefined;
    let result: TemplateResult | typeof nothing = nothing;
    if (current?.state === 'testing') {
      result = html`<span class="hint">Asking ${current.endpoint}…</span>`;
    } else if (current?.state === 'done' && current.ok) {
      result = html`<ul class="test-result">
        ${current.lines.map(
          (line, i) =>
            html`<li class=${i === 0 ? 'test-ok' : ''}>
              <span class="label">${line.label}:</span> ${line.value}
            </li>`,
        )}
      </ul>`;
    } else if (current?.state === 'done') {
      result = html`<p class="test-error">${current.message}</p>`;
    }
    return html`<div class="test">
      <button
        type="button"
        @click=${this.handleTest}
        aria-disabled=${current?.state === 'testing' ? 'true' : 'false'}
        aria-describedby="test-result"
      >
        Test connection
      </button>
      <div id="test-result" role="status">${result}</div>
    </div>`;
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

  private checkbox(key: Flag, label: string, hint: string) {
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
        aria-describedby="${key}-hint ${key}-error"
      />
      <span class="hint" id="${key}-hint">${rule.hint}</span>
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
      // A result says nothing about another server or key.
      if (key === 'endpoint' || key === 'apiKey') this.stopTest();
    };
  }

  private flag(key: Flag) {
    return (e: Event) => {
      if (!this.draft) return;
      this.draft = { ...this.draft, [key]: (e.target as HTMLInputElement).checked };
    };
  }

  /** Server choices: the endpoint, its key, Test connection and the tool mode. */
  private renderServer(d: Draft): TemplateResult {
    return html`
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
        'The address of your model server: KoboldCPP, llama.cpp, Ollama, LM Studio or any OpenAI-compatible one.',
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
        'Only if the server asks for one (a KoboldCPP password, an API key). Kept in this browser.',
      )}
      ${this.renderTest()}
      ${this.field(
        'toolMode',
        'Tool mode',
        html`<select
          id="toolMode"
          .value=${d.toolMode}
          @change=${this.handleToolMode}
          aria-describedby="toolMode-hint"
        >
          <option value="auto" ?selected=${d.toolMode === 'auto'}>Auto (recommended)</option>
          <option value="native" ?selected=${d.toolMode === 'native'}>Native tool calls</option>
          <option value="prompted" ?selected=${d.toolMode === 'prompted'}>Prompted tools</option>
        </select>`,
        'How the model looks things up in its memory and saves to it. Auto works it out for you. Native lets the model server pass those requests itself (best with models made for it); Prompted explains them to the model in plain text instead, which works with any model but takes more room in the prompt.',
      )}
    `;
  }

  /** In this browser: the model file kept here (its own element) and what is wrong with it. */
  private renderInPage(d: Draft): TemplateResult {
    return html`<sm-in-page-model
        .name=${d.inPageModel}
        @sm-in-page-model=${this.handleInPageModel}
      ></sm-in-page-model>
      <span class="field-error" id="inPageModel-error" role="alert"
        >${this.errors.inPageModel ?? ''}</span
      >`;
  }

  private handleModelSource(e: Event): void {
    const value = (e.target as HTMLSelectElement).value;
    if (this.draft && (value === 'server' || value === 'inpage')) {
      this.draft = { ...this.draft, modelSource: value };
      this.errors = { ...this.errors, inPageModel: undefined, endpoint: undefined };
      this.stopTest();
    }
  }

  private handleInPageModel(e: CustomEvent<{ name: string }>): void {
    e.stopPropagation();
    if (!this.draft) return;
    // Deleted: the app ends the engine that has it loaded, saved or not.
    if (!e.detail.name && this.draft.inPageModel) {
      emit(this, 'sm-in-page-model-deleted', { name: this.draft.inPageModel });
    }
    this.draft = { ...this.draft, inPageModel: e.detail.name };
    if (e.detail.name) this.errors = { ...this.errors, inPageModel: undefined };
  }

  private handleToolMode(e: Event): void {
    const value = (e.target as HTMLSelectElement).value;
    if (this.draft && (value === 'auto' || value === 'native' || value === 'prompted')) {
      this.draft = { ...this.draft, toolMode: value };
      if (this.test?.state === 'done') this.stopTest();
    }
  }

  private handleEmbeddingModel(e: Event): void {
    const value = (e.target as HTMLSelectElement).value;
    if (this.draft && (value === 'default' || value === 'bundled')) {
      this.draft = { ...this.draft, embeddingModel: value };
    }
  }

  private handleAutoBackup(e: Event): void {
    const value = (e.target as HTMLSelectElement).value;
    if (this.draft && (value === 'off' || value === 'daily' || value === 'weekly')) {
      this.draft = { ...this.draft, autoBackup: value };
    }
  }

  private handleBackupKeep(e: Event): void {
    const value = Number((e.target as HTMLSelectElement).value);
    if (this.draft && (KEEP_CHOICES as readonly number[]).includes(value)) {
      this.draft = { ...this.draft, backupKeep: value };
    }
  }

  private stopTest(): void {
    this.testController?.abort();
    this.testController = undefined;
    this.test = undefined;
  }

  private async handleTest(): Promise<void> {
    const d = this.draft;
    // Not `disabled` while it tests: a disabled button drops the keyboard's focus to the page.
    if (!d || this.test?.state === 'testing') return;
    const problem = endpointProblem(d.endpoint);
    if (problem) {
      this.errors = { ...this.errors, endpoint: problem };
      this.renderRoot.querySelector<HTMLElement>('#endpoint')?.focus();
      return;
    }
    const contextSize = Number(d.contextSize.trim() || '0');
    this.stopTest();
    const controller = new AbortController();
    this.testController = controller;
    const endpoint = d.endpoint.trim();
    this.test = { state: 'testing', endpoint };
    const detail: TestConnectionDetail = {
      endpoint,
      apiKey: d.apiKey,
      contextSize: Number.isInteger(contextSize) && contextSize >= MIN_CONTEXT ? contextSize : 0,
      toolMode: d.toolMode,
      signal: controller.signal,
    };
    emit(this, 'sm-test-connection', detail);
    let report: ConnectionReport;
    try {
      report = detail.reply
        ? await detail.reply
        : { ok: false, message: 'Testing the connection is not available here.' };
    } catch (e) {
      report = { ok: false, message: e instanceof Error ? e.message : String(e) };
    }
    if (this.testController !== controller) return; // stopped, or a newer test runs
    this.testController = undefined;
    this.test = { state: 'done', endpoint, ...report };
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
    this.stopTest();
    // Escape, Cancel and Save all give focus back to what opened the dialog.
    const opener = this.opener;
    this.opener = undefined;
    if (opener?.isConnected) opener.focus();
    // What opened it is gone (a banner that went once connected): the page puts focus.
    else emit(this, 'sm-focus-lost', {});
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-settings': SmSettings;
  }
  interface GlobalEventHandlersEventMap {
    'sm-save-settings': CustomEvent<SaveSettingsDetail>;
    'sm-test-connection': CustomEvent<TestConnectionDetail>;
  }
}
