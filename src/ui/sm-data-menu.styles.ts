// <sm-data-menu>'s own styles; the element puts the shared tokens and base sheet (styles.ts) first.
import { css } from 'lit';

export const dataMenuStyles = css`
  :host {
    display: inline-flex;
    position: relative;
    gap: 6px;
  }
  .menu-wrap {
    position: relative;
  }
  ul.menu {
    position: absolute;
    z-index: 20;
    top: calc(100% + 4px);
    left: 0;
    min-width: 230px;
    width: max-content;
    max-width: calc(100vw - 24px);
    margin: 0;
    padding: 4px;
    list-style: none;
    border: 1px solid var(--sm-border);
    border-radius: var(--sm-radius);
    background: var(--sm-surface);
    box-shadow: 0 6px 24px rgb(20 30 50 / 16%);
  }
  /* A format's name is its button; the hint below it describes it (aria-describedby) and,
     under the button's overlay, takes the click too. */
  .menu li {
    position: relative;
    border-radius: 4px;
  }
  /* Backup settings, set apart from the formats. */
  .menu li.backups {
    margin-top: 4px;
    border-top: 1px solid var(--sm-surface-2);
    border-top-left-radius: 0;
    border-top-right-radius: 0;
    padding-top: 2px;
  }
  .menu li:hover,
  .menu li:has(button:focus-visible) {
    background: var(--sm-surface-2);
  }
  /* The keyboard's place in the menu, seen at a glance (the pale background alone is not). */
  .menu li:has(button:focus-visible) {
    outline: 2px solid var(--sm-accent);
    outline-offset: -2px;
  }
  .menu button {
    display: block;
    width: 100%;
    border: none;
    background: none;
    padding: 6px 10px 0;
    text-align: left;
  }
  .menu button::after {
    content: '';
    position: absolute;
    inset: 0;
  }
  .menu button:focus-visible {
    outline: none;
  }
  .menu .hint {
    display: block;
    padding: 0 10px 6px;
    font-size: 0.78rem;
    color: var(--sm-muted);
  }
  /* Read, not shown: the colon between a choice's name and its hint (the button is named by
     all its text, so what is said matches what is shown). */
  .sr {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip-path: inset(50%);
    white-space: nowrap;
  }
  .caret {
    margin-left: 4px;
    font-size: 0.7em;
  }
  input[type='file'] {
    display: none;
  }
  dialog {
    width: min(440px, calc(100vw - 24px));
    padding: 18px 20px;
    border: 1px solid var(--sm-border);
    border-radius: 10px;
    background: var(--sm-surface);
    color: var(--sm-text);
    box-shadow: 0 12px 40px rgb(20 30 50 / 25%);
  }
  dialog::backdrop {
    background: rgb(20 30 50 / 35%);
  }
  h2 {
    margin: 0 0 10px;
    font-size: 1.1rem;
  }
  p {
    margin: 0 0 10px;
  }
  .file {
    font-family: var(--sm-mono);
    font-size: 0.9em;
    overflow-wrap: anywhere;
  }
  .choices {
    display: grid;
    gap: 8px;
    margin: 12px 0 4px;
  }
  .choice {
    display: grid;
    gap: 2px;
    padding: 8px 12px;
    text-align: left;
  }
  .choice .hint {
    font-size: 0.82rem;
    color: var(--sm-muted);
  }
  .choice.primary .hint {
    color: inherit;
    opacity: 0.85;
  }
  progress {
    width: 100%;
  }
  [role='alert'] {
    color: var(--sm-danger);
    overflow-wrap: anywhere;
    white-space: pre-wrap;
  }
  /* The report of an import of several files: one item per file, what it left out below it. */
  ul.report {
    display: grid;
    gap: 8px;
    max-height: min(50vh, 360px);
    overflow-y: auto;
    margin: 0;
    padding: 0;
    list-style: none;
    overflow-wrap: anywhere;
  }
  ul.report > li.failed {
    color: var(--sm-danger);
  }
  ul.report button.link {
    display: block;
    margin-top: 4px;
    padding: 2px 8px;
    font-size: 0.85rem;
  }
  ul.details {
    margin: 4px 0 0;
    padding-left: 18px;
    font-size: 0.85rem;
    color: var(--sm-muted);
  }
  .actions {
    display: flex;
    justify-content: flex-end;
    gap: 8px;
    margin-top: 14px;
  }
`;
