// The backup reminder: one short line when memory changed and nothing was exported, backed up or
// synced for a week (or an automatic backup waits for the folder's permission), with Back up now
// and Dismiss. Turned off in Settings → Data.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { Backups } from '../app/backups';
import { daysAgo } from '../app/backup-plan';
import { BackupsController } from './backups-controller';
import { base, tokens } from './styles';

/**
 * `<sm-backup-reminder>`: the reminder line (nothing when it is not due). Back up now writes the
 * backup (the folder, or a download); Dismiss hides it for a week.
 */
@customElement('sm-backup-reminder')
export class SmBackupReminder extends LitElement {
  static override styles = [
    tokens,
    base,
    css`
      :host {
        display: block;
      }
      .line {
        display: flex;
        align-items: center;
        gap: 4px 10px;
        padding: 4px 16px;
        font-size: 0.85rem;
        background: var(--sm-surface-2);
        border-bottom: 1px solid var(--sm-border);
      }
      .text {
        flex: 1 1 0;
        min-width: 0;
        white-space: nowrap;
        overflow: hidden;
        text-overflow: ellipsis;
      }
      button,
      ::slotted(*) {
        flex: none;
        padding: 2px 10px;
      }
      @media (max-width: 600px) {
        .line {
          padding: 3px 10px;
          font-size: 0.8rem;
        }
      }
    `,
  ];

  /** The page's backups (src/app/backups.ts). */
  @property({ attribute: false }) backups: Backups | undefined;

  constructor() {
    super();
    new BackupsController(this, () => this.backups);
  }

  override render() {
    const b = this.backups;
    const s = b?.state;
    if (!b || !s || !(s.reminder || s.waitingForFolder || s.autoFailed)) return nothing;
    const last = s.record.lastBackup;
    // Short enough for a phone's one line: the reminder itself says memory has changed since.
    const text = s.autoFailed
      ? 'Automatic backup failed (Settings → Data says why).'
      : s.waitingForFolder
        ? `Backup waits for permission to “${s.folder?.name ?? 'the folder'}”.`
        : last === null
          ? 'No backup of memory yet.'
          : `Last backup: ${daysAgo(last, Date.now())}.`;
    return html`<div class="line" role="region" aria-label="Backup reminder">
      <span class="text" title=${s.autoFailed ? (s.message?.text ?? text) : text}>${text}</span>
      <button ?disabled=${s.running} @click=${() => void b.backUpNow()}>Back up now</button>
      <button aria-label="Dismiss the backup reminder" @click=${() => b.dismissReminder()}>
        Dismiss
      </button>
      <slot></slot>
    </div>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-backup-reminder': SmBackupReminder;
  }
}
