// Settings → Data: whether the browser keeps memory, how much it uses and has free, what to do
// when it is not kept, when memory was last backed up, and the backup actions (Back up now, the
// folder for backups). The backup settings themselves are fields of the Settings dialog.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { Backups } from '../app/backups';
import { daysAgo } from '../app/backup-plan';
import { browserFamily, storageAdvice, usageLine } from '../app/storage-status';
import { BackupsController } from './backups-controller';
import { base, tokens } from './styles';

/** Whether the app runs installed (its own window, or from the home screen). */
function runsInstalled(): boolean {
  const standalone = (navigator as { standalone?: boolean }).standalone === true;
  return standalone || window.matchMedia?.('(display-mode: standalone)').matches === true;
}

function family() {
  const brands =
    (navigator as { userAgentData?: { brands?: { brand: string }[] } }).userAgentData?.brands ?? [];
  return browserFamily(
    navigator.userAgent,
    brands.map((b) => b.brand),
  );
}

/**
 * `<sm-backup-panel>`: the storage and backup status of Settings → Data, with its actions. It
 * shows what `backups` knows and calls it on a click; it keeps no state of its own.
 */
@customElement('sm-backup-panel')
export class SmBackupPanel extends LitElement {
  static override styles = [
    tokens,
    base,
    css`
      :host {
        display: block;
        font-size: 0.9rem;
      }
      h3 {
        margin: 8px 0 4px;
        font-size: 0.875rem;
      }
      p {
        margin: 0 0 6px;
      }
      ul {
        margin: 0 0 8px;
        padding-left: 1.2em;
        color: var(--sm-muted);
        font-size: 0.85rem;
      }
      li + li {
        margin-top: 2px;
      }
      .row {
        display: flex;
        flex-wrap: wrap;
        gap: 6px;
        margin: 4px 0 8px;
      }
      .kept {
        font-weight: 600;
      }
      .hint {
        font-size: 0.8rem;
        color: var(--sm-muted);
      }
      .error {
        color: var(--sm-danger);
      }
      .file {
        overflow-wrap: anywhere;
      }
    `,
  ];

  /** The page's backups and storage (src/app/backups.ts). */
  @property({ attribute: false }) backups: Backups | undefined;

  constructor() {
    super();
    new BackupsController(this, () => this.backups);
  }

  override render() {
    const b = this.backups;
    if (!b) return nothing;
    const s = b.state;
    const words = storageAdvice(s.storage, family(), runsInstalled());
    const usage = usageLine(s.storage);
    const now = Date.now();
    return html`
      <h3>Memory in this browser</h3>
      <p class="kept" id="storage-kept">${words.status}</p>
      ${usage ? html`<p id="storage-usage">${usage}</p>` : nothing}
      ${
        words.advice.length
          ? html`<ul aria-label="What to do">
              ${words.advice.map((line) => html`<li>${line}</li>`)}
            </ul>`
          : nothing
      }
      ${
        s.storage.persisted === false
          ? html`<div class="row">
              <button type="button" @click=${() => void b.askToKeep()}>
                Ask the browser to keep it
              </button>
            </div>`
          : nothing
      }
      <h3>Backups</h3>
      <p id="last-backup">Last backup: ${daysAgo(s.record.lastBackup, now)}.</p>
      ${s.lastSync !== null ? html`<p>Last synced: ${daysAgo(s.lastSync, now)}.</p>` : nothing}
      <p>${this.whereLine()}</p>
      <div class="row">
        <button type="button" ?disabled=${s.running} @click=${() => void b.backUpNow()}>
          ${s.waitingForFolder ? 'Allow the folder and back up' : 'Back up now'}
        </button>
        ${
          s.folderSupported
            ? html`<button type="button" @click=${() => void b.chooseFolder()}>
                ${s.folder ? 'Choose another folder…' : 'Choose a folder…'}
              </button>`
            : nothing
        }
        ${
          s.folder
            ? html`<button type="button" @click=${() => void b.forgetFolder()}>
                Stop using this folder
              </button>`
            : nothing
        }
      </div>
      <p role="status" class=${s.message?.kind === 'error' ? 'error file' : 'file'}>
        ${s.running ? 'Backing up…' : (s.message?.text ?? '')}
      </p>
    `;
  }

  private whereLine(): string {
    const s = this.backups!.state;
    if (s.folder) {
      const again =
        s.folder.permission === 'granted'
          ? ''
          : ' The browser asks again for permission to write there: press Back up now.';
      return `Backups go to the folder “${s.folder.name}”; older automatic backups there are deleted beyond the number kept.${again}`;
    }
    if (s.folderSupported) {
      return 'Backups are saved as downloads. Choose a folder to keep them together, with older ones deleted beyond the number kept.';
    }
    return 'Backups are saved as downloads: this browser cannot write to a folder you pick, so older ones are not deleted.';
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-backup-panel': SmBackupPanel;
  }
}
