// Settings → Sync (docs/sync.md, "Settings"): the CouchDB server, database and login, optional
// end-to-end encryption, Sync now and Keep in sync, and a status line that says when it last
// synced, what waits, and what is wrong with the sentence that fixes it.
import { proxy } from 'comlink';
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { base, tokens } from './styles';
import type { SyncConfig, SyncStatus } from '../sync/engine';

/** What the section needs from the worker. */
export interface SyncClient {
  syncConfig(): Promise<SyncConfig | undefined>;
  configureSync(config: SyncConfig): Promise<SyncStatus>;
  syncNow(): Promise<SyncStatus>;
  onSyncStatus(listener: (status: SyncStatus) => void): Promise<void> | void;
}

const EMPTY: SyncConfig = {
  url: '',
  database: 'memory',
  username: '',
  password: '',
  encrypt: false,
  passphrase: '',
  live: false,
};

/** "14:03" today, else "3 Mar 14:03". */
function when(ms: number, now = Date.now()): string {
  const d = new Date(ms);
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return new Date(now).toDateString() === d.toDateString()
    ? time
    : `${d.toLocaleDateString(undefined, { day: 'numeric', month: 'short' })} ${time}`;
}

/** The status line, in words (text only: server strings are never markup). */
export function statusLine(s: SyncStatus | undefined): string {
  if (!s) return '';
  if (s.state === 'syncing') return 'Syncing…';
  const parts: string[] = [];
  if (s.state === 'error') parts.push('Sync stopped');
  if (s.lastSync !== null) parts.push(`Last sync ${when(s.lastSync)}`);
  else parts.push('Not synced yet on this device');
  if (s.state === 'live') parts.push('keeping in sync');
  if (s.state === 'retrying') parts.push('trying again');
  if (s.embedding)
    parts.push(`embedding what arrived: ${s.embedding.done} of ${s.embedding.total}`);
  if (s.waiting) parts.push(`${s.waiting} ${s.waiting === 1 ? 'change' : 'changes'} waiting`);
  if (s.conflicts)
    parts.push(
      `${s.conflicts} ${s.conflicts === 1 ? 'conflict' : 'conflicts'} decided (the other version is in the entry’s history)`,
    );
  return `${parts.join(' · ')}.`;
}

/**
 * The Sync section of Settings. Its fields are saved on this device only, when Sync now is
 * pressed or Keep in sync is switched.
 */
@customElement('sm-sync-settings')
export class SmSyncSettings extends LitElement {
  static override styles = [
    tokens,
    base,
    css`
      :host {
        display: block;
      }
      .field {
        display: flex;
        flex-direction: column;
        gap: 3px;
        margin-bottom: 10px;
      }
      .field > label {
        font-size: 0.875rem;
        font-weight: 600;
      }
      input:not([type='checkbox']) {
        width: 100%;
      }
      .grid {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(150px, 1fr));
        gap: 0 12px;
      }
      .check {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 2px 8px;
        margin: 4px 0 10px;
        font-size: 0.9rem;
      }
      .check input {
        margin: 0;
      }
      .check .hint {
        flex-basis: 100%;
        padding-left: 21px;
      }
      .hint {
        font-size: 0.8rem;
        color: var(--sm-muted);
      }
      .actions {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 6px 10px;
      }
      .status {
        flex: 1 1 14rem;
        min-width: 0;
        margin: 0;
        font-size: 0.85rem;
        overflow-wrap: anywhere;
      }
      .error {
        margin: 6px 0 0;
        font-size: 0.85rem;
        color: var(--sm-danger);
        overflow-wrap: anywhere;
      }
      .fix {
        margin: 2px 0 0;
        font-size: 0.85rem;
        overflow-wrap: anywhere;
      }
    `,
  ];

  /** The worker's sync API, handed down by the Settings dialog; without it only the form shows. */
  @property({ attribute: false }) client: SyncClient | undefined;

  @state() private draft: SyncConfig = { ...EMPTY };
  @state() private status: SyncStatus | undefined;
  @state() private busy = false;
  @state() private problem = '';

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    const client = this.client;
    if (!client) return;
    const saved = await client.syncConfig();
    if (saved) this.draft = { ...EMPTY, ...saved };
    await client.onSyncStatus(proxy((s: SyncStatus) => (this.status = s)));
  }

  override render() {
    const d = this.draft;
    const s = this.status;
    const error = s?.error;
    return html`
      <div class="field">
        <label for="sync-url">CouchDB server</label>
        <input
          id="sync-url"
          type="url"
          inputmode="url"
          spellcheck="false"
          autocomplete="off"
          placeholder="http://127.0.0.1:5984"
          .value=${d.url}
          @input=${this.text('url')}
          aria-describedby="sync-url-hint"
        />
        <span class="hint" id="sync-url-hint"
          >Your own CouchDB (or a compatible server); every device syncs with the same one.</span
        >
      </div>
      <div class="grid">
        <div class="field">
          <label for="sync-db">Database</label>
          <input
            id="sync-db"
            spellcheck="false"
            autocomplete="off"
            .value=${d.database}
            @input=${this.text('database')}
          />
        </div>
        <div class="field">
          <label for="sync-user">Username</label>
          <input
            id="sync-user"
            autocomplete="off"
            spellcheck="false"
            .value=${d.username}
            @input=${this.text('username')}
          />
        </div>
        <div class="field">
          <label for="sync-password">Password</label>
          <input
            id="sync-password"
            type="password"
            autocomplete="off"
            .value=${d.password}
            @input=${this.text('password')}
          />
        </div>
      </div>
      <div class="check">
        <input
          id="sync-encrypt"
          type="checkbox"
          .checked=${d.encrypt}
          @change=${this.flag('encrypt')}
          aria-describedby="sync-encrypt-hint"
        />
        <label for="sync-encrypt">Encrypt end to end</label>
        <span class="hint" id="sync-encrypt-hint"
          >Memory is encrypted in this browser; the server keeps only ciphertext. Every device needs
          the same passphrase, and a lost passphrase cannot be recovered.</span
        >
      </div>
      ${
        d.encrypt
          ? html`<div class="field">
              <label for="sync-passphrase">Passphrase</label>
              <input
                id="sync-passphrase"
                type="password"
                autocomplete="off"
                .value=${d.passphrase}
                @input=${this.text('passphrase')}
              />
            </div>`
          : nothing
      }
      <div class="check">
        <input
          id="sync-live"
          type="checkbox"
          .checked=${d.live}
          @change=${this.handleLive}
          aria-describedby="sync-live-hint"
        />
        <label for="sync-live">Keep in sync</label>
        <span class="hint" id="sync-live-hint"
          >Sends and receives changes as they happen; when the server is away it tries again,
          waiting longer each time.</span
        >
      </div>
      <div class="actions">
        <button type="button" id="sync-now" ?disabled=${this.busy} @click=${this.handleSyncNow}>
          Sync now
        </button>
        <p
          class="status"
          role="status"
          aria-live="polite"
          data-state=${s?.state ?? ''}
          data-last-sync=${s?.lastSync ?? ''}
        >
          ${statusLine(s)}
        </p>
      </div>
      ${this.problem ? html`<p class="error" role="alert">${this.problem}</p>` : nothing}
      ${
        error
          ? html`<p class="error" role="alert">${error.message}</p>
              <p class="fix">${error.fix}</p>`
          : nothing
      }
      ${s?.skipped ? html`<p class="fix">${s.skippedWhy}</p>` : nothing}
      <p class="hint">
        Sync now and Keep in sync save these settings, in this browser only; they never sync.
      </p>
    `;
  }

  private text(key: 'url' | 'database' | 'username' | 'password' | 'passphrase') {
    return (e: Event) => {
      this.draft = { ...this.draft, [key]: (e.target as HTMLInputElement).value };
    };
  }

  private flag(key: 'encrypt') {
    return (e: Event) => {
      this.draft = { ...this.draft, [key]: (e.target as HTMLInputElement).checked };
    };
  }

  private async apply(config: SyncConfig): Promise<SyncStatus | undefined> {
    const client = this.client;
    if (!client) {
      this.problem = 'The memory engine is not running, so sync cannot start.';
      return undefined;
    }
    this.problem = '';
    this.busy = true;
    try {
      return await client.configureSync(config);
    } catch (e) {
      this.problem = `Sync could not start: ${e instanceof Error ? e.message : String(e)}`;
      return undefined;
    } finally {
      this.busy = false;
    }
  }

  private async handleLive(e: Event): Promise<void> {
    this.draft = { ...this.draft, live: (e.target as HTMLInputElement).checked };
    await this.apply(this.draft);
    await this.showOutcome();
  }

  /** Brings the status and any error into view (the dialog scrolls; a phone shows little). */
  private async showOutcome(): Promise<void> {
    await this.updateComplete;
    const last = [...this.renderRoot.querySelectorAll<HTMLElement>('.status, .error, .fix')].pop();
    last?.scrollIntoView({ block: 'nearest' });
  }

  private async handleSyncNow(): Promise<void> {
    // With Keep in sync on, saving starts live sync, which syncs first.
    const s = await this.apply(this.draft);
    if (s && !this.draft.live && this.client) {
      this.busy = true;
      try {
        this.status = await this.client.syncNow();
      } finally {
        this.busy = false;
      }
    }
    await this.showOutcome();
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-sync-settings': SmSyncSettings;
  }
}
