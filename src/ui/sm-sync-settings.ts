// Settings → Sync (docs/sync.md, "Setting up"): the steps a first sync needs, said up front (the
// server must allow this app's origin: CORS), the CouchDB server, database and login, Check
// server (which step is missing), optional end-to-end encryption, Sync now and Keep in sync, and
// a status line that says when it last synced, what waits, what was skipped and why, and what is
// wrong with the sentence that fixes it.
import { proxy } from 'comlink';
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { base, tokens } from './styles';
import type { CheckTarget, ServerCheck } from '../sync/check';
import type { SyncConfig, SyncStatus } from '../sync/engine';

/** What the section needs from the worker. */
export interface SyncClient {
  syncConfig(): Promise<SyncConfig | undefined>;
  configureSync(config: SyncConfig): Promise<SyncStatus>;
  syncNow(): Promise<SyncStatus>;
  checkSyncServer(target: CheckTarget): Promise<ServerCheck>;
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

/** What was skipped, in words: how many documents, then each reason with its count. */
export function skippedLines(
  s: SyncStatus | undefined,
): { head: string; reasons: string[] } | null {
  if (!s?.skipped) return null;
  const n = s.skipped;
  const head =
    `${n} ${n === 1 ? 'document' : 'documents'} from the server ${n === 1 ? 'was' : 'were'} ` +
    'not written here (they failed the checks; nothing else is affected):';
  const reasons = (s.skippedReasons ?? []).map(
    (r) => `${r.count} × ${r.why}${r.count > 1 ? ` (and likewise ${r.count - 1} more)` : ''}`,
  );
  const listed = (s.skippedReasons ?? []).reduce((sum, r) => sum + r.count, 0);
  if (listed < n) reasons.push(`${n - listed} more, for other reasons`);
  if (!reasons.length && s.skippedWhy) reasons.push(s.skippedWhy);
  return { head, reasons };
}

/** The CouchDB configuration that allows `origin` (local.ini), for the setup steps. */
function corsConfig(origin: string): string {
  return [
    '[chttpd]',
    'enable_cors = true',
    '',
    '[cors]',
    `origins = ${origin}`,
    'credentials = true',
    'methods = GET, PUT, POST, HEAD, DELETE',
    'headers = accept, authorization, content-type, origin, referer',
  ].join('\n');
}

const MARK: Record<'true' | 'false' | 'null', { glyph: string; words: string }> = {
  true: { glyph: '✓', words: 'Fine:' },
  false: { glyph: '✗', words: 'Missing:' },
  null: { glyph: '?', words: 'Not sure:' },
};

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
      .intro {
        margin: 0 0 6px;
        font-size: 0.9rem;
      }
      .steps {
        margin: 0 0 12px;
        padding-left: 1.4rem;
        font-size: 0.875rem;
      }
      .steps li {
        margin-bottom: 3px;
        overflow-wrap: anywhere;
      }
      .steps code,
      .steps pre {
        font-family: var(--sm-mono);
        font-size: 0.8rem;
      }
      .steps pre {
        margin: 4px 0;
        padding: 6px 8px;
        overflow-x: auto;
        background: var(--sm-surface-2);
        border-radius: var(--sm-radius);
      }
      .check-head {
        margin: 6px 0 0;
        font-size: 0.85rem;
      }
      .checks,
      .skipped {
        margin: 6px 0 0;
        padding-left: 0;
        list-style: none;
        font-size: 0.85rem;
      }
      .checks li {
        display: flex;
        gap: 6px;
        margin-bottom: 2px;
        overflow-wrap: anywhere;
      }
      .checks .mark {
        flex: none;
        width: 1.1em;
        font-weight: 700;
        text-align: center;
      }
      .checks [data-ok='true'] .mark {
        color: var(--sm-ok);
      }
      .checks [data-ok='false'] .mark {
        color: var(--sm-danger);
      }
      .skipped li {
        padding-left: 1rem;
        overflow-wrap: anywhere;
      }
      .visually-hidden {
        position: absolute;
        width: 1px;
        height: 1px;
        overflow: hidden;
        clip: rect(0 0 0 0);
        white-space: nowrap;
      }
    `,
  ];

  /** The worker's sync API, handed down by the Settings dialog; without it only the form shows. */
  @property({ attribute: false }) client: SyncClient | undefined;

  @state() private draft: SyncConfig = { ...EMPTY };
  @state() private status: SyncStatus | undefined;
  @state() private busy = false;
  @state() private problem = '';
  @state() private checking = false;
  @state() private check: ServerCheck | undefined;
  /** Checks finished so far (a test waits for the next one). */
  @state() private checks = 0;

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    const client = this.client;
    if (!client) return;
    await this.reload();
    await client.onSyncStatus(proxy((s: SyncStatus) => (this.status = s)));
  }

  /**
   * The form as the sync settings in use have it, with no check or problem of an earlier visit:
   * the Settings dialog calls it as it opens, so what was typed and never applied (Sync now and
   * Keep in sync apply it; the dialog's Save and Cancel do not) is not shown as if saved.
   */
  async reload(): Promise<void> {
    const saved = await this.client?.syncConfig();
    this.draft = { ...EMPTY, ...saved };
    this.check = undefined;
    this.problem = '';
  }

  override render() {
    const d = this.draft;
    const s = this.status;
    const error = s?.error;
    const origin = location.origin;
    const skipped = skippedLines(s);
    return html`
      <p class="intro">
        Sync keeps this memory the same in each browser you use, through a CouchDB server that you
        run. Nothing leaves this browser until you press Sync now or turn on Keep in sync.
      </p>
      <ol class="steps" aria-label="Setting up sync">
        <li>Run CouchDB (or a server that works like it) where all your devices can reach it.</li>
        <li>
          Let this app talk to it: in CouchDB, turn on CORS (sharing with other web addresses) and
          allow <code>${origin}</code>, with logins allowed (Fauxton → Settings → CORS).
          <details>
            <summary>The same as CouchDB settings (local.ini)</summary>
            <pre>${corsConfig(origin)}</pre>
          </details>
        </li>
        <li>
          Enter its address, a database name and your CouchDB login below; press Check server.
        </li>
        <li>Press Sync now, or turn on Keep in sync.</li>
      </ol>
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
          >Memory is scrambled in this browser before it leaves, so the server keeps only
          ciphertext: text that nobody can read without your passphrase. Every device needs the same
          passphrase, and a lost passphrase cannot be recovered.</span
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
        <button
          type="button"
          id="sync-check"
          ?disabled=${this.checking}
          @click=${this.handleCheck}
          aria-describedby="sync-check-hint"
        >
          Check server
        </button>
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
      <p class="hint" id="sync-check-hint">
        Check server asks the server what a first sync needs and says what is missing; it writes
        nothing.
      </p>
      ${this.renderCheck()}
      ${this.problem ? html`<p class="error" role="alert">${this.problem}</p>` : nothing}
      ${
        error
          ? html`<p class="error" role="alert">${error.message}</p>
              <p class="fix">${error.fix}</p>`
          : nothing
      }
      ${
        skipped
          ? html`<div class="skipped-box">
              <p class="fix" id="sync-skipped">${skipped.head}</p>
              <ul class="skipped" aria-labelledby="sync-skipped">
                ${skipped.reasons.map((r) => html`<li>${r}</li>`)}
              </ul>
            </div>`
          : nothing
      }
      <p class="hint">
        Sync now and Keep in sync save these settings, in this browser only; they never sync.
      </p>
    `;
  }

  /** The check's verdict, in a live region that is always there (so its change is announced). */
  private renderCheck() {
    const c = this.check;
    return html`<div id="sync-check-result" aria-live="polite" data-checks=${this.checks}>
      ${this.checking ? html`<p class="check-head">Asking the server…</p>` : nothing}
      ${
        c && !this.checking
          ? html`<p class="check-head">
                ${c.ok ? 'The server is ready: press Sync now.' : 'The server is not ready yet:'}
              </p>
              <ul class="checks" aria-label="Server check">
                ${c.lines.map((l) => {
                  const mark = MARK[String(l.ok) as 'true' | 'false' | 'null'];
                  return html`<li data-ok=${String(l.ok)} data-step=${l.step}>
                    <span class="mark" aria-hidden="true">${mark.glyph}</span>
                    <span><span class="visually-hidden">${mark.words} </span>${l.text}</span>
                  </li>`;
                })}
              </ul>`
          : nothing
      }
    </div>`;
  }

  private async handleCheck(): Promise<void> {
    const client = this.client;
    if (!client) {
      this.problem = 'The memory engine is not running, so the server cannot be checked.';
      return;
    }
    this.problem = '';
    this.checking = true;
    this.check = undefined;
    const { url, database, username, password } = this.draft;
    try {
      this.check = await client.checkSyncServer({ url, database, username, password });
    } catch (e) {
      this.problem = `The check could not run: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      this.checking = false;
      this.checks++;
    }
    await this.showOutcome('#sync-check-result');
  }

  private text(key: 'url' | 'database' | 'username' | 'password' | 'passphrase') {
    return (e: Event) => {
      this.draft = { ...this.draft, [key]: (e.target as HTMLInputElement).value };
      // A check of other settings would mislead.
      if (key !== 'passphrase') this.check = undefined;
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
  private async showOutcome(selector = '.status, .error, .fix, .skipped-box'): Promise<void> {
    await this.updateComplete;
    const last = [...this.renderRoot.querySelectorAll<HTMLElement>(selector)].pop();
    last?.scrollIntoView({ block: 'nearest' });
  }

  private async handleSyncNow(): Promise<void> {
    // With Keep in sync on, saving starts live sync, which syncs first.
    const s = await this.apply(this.draft);
    if (s && !this.draft.live && this.client) {
      this.busy = true;
      try {
        this.status = await this.client.syncNow();
      } catch (e) {
        // The engine answers failures in its status; a rejection here is the worker's own.
        this.problem = `Sync could not run: ${e instanceof Error ? e.message : String(e)}`;
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
