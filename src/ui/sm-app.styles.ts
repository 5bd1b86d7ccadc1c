// <sm-app>'s own styles; the element puts the shared tokens and base sheet (styles.ts) first.
import { css } from 'lit';

export const appStyles = css`
  :host {
    display: flex;
    flex-direction: column;
    height: 100dvh;
    background: var(--sm-bg);
  }
  .skip {
    position: absolute;
    z-index: 100;
    top: 4px;
    left: 4px;
    padding: 8px 12px;
    border-radius: var(--sm-radius);
    background: var(--sm-accent);
    color: var(--sm-accent-text);
    transform: translateY(-150%);
  }
  .skip:focus {
    transform: none;
  }
  header {
    display: flex;
    align-items: center;
    gap: var(--sm-gap);
    padding: 8px 16px;
    background: var(--sm-surface);
    border-bottom: 1px solid var(--sm-border);
    flex-wrap: wrap;
  }
  h1 {
    font-size: 1.05rem;
    margin: 0;
    white-space: nowrap;
  }
  /* One line: the counts and the storage used whole, then as much of the model as fits. */
  .stats {
    flex: 1;
    display: flex;
    margin: 0;
    font-size: 0.85rem;
    color: var(--sm-muted);
    min-width: 8rem;
    white-space: nowrap;
    overflow: hidden;
  }
  .stats .counts,
  .stats .extra {
    flex: none;
  }
  .stats .extra:last-child {
    flex: 0 1 auto;
    min-width: 0;
    overflow: hidden;
    text-overflow: ellipsis;
  }
  .actions {
    display: flex;
    gap: 8px;
    align-items: center;
  }
  button.settings {
    display: inline-flex;
    align-items: center;
    gap: 6px;
  }
  button.settings svg {
    color: var(--sm-muted);
  }
  .banner {
    padding: 6px 16px;
    font-size: 0.85rem;
    background: var(--sm-surface-2);
    border-bottom: 1px solid var(--sm-border);
    display: flex;
    flex-wrap: wrap;
    gap: 4px 10px;
    align-items: center;
  }
  .banner .text {
    flex: 1 1 0;
    min-width: 0;
  }
  .banner button {
    padding: 3px 10px;
  }
  .banner button.more,
  sm-backup-reminder button.more {
    flex: none;
  }
  .banner details {
    flex: none;
    font-size: 0.8rem;
    white-space: nowrap;
  }
  .banner details[open] {
    order: 5;
    flex-basis: 100%;
  }
  .banner summary {
    cursor: pointer;
    color: var(--sm-accent);
  }
  .banner details p {
    margin: 4px 0 2px;
    white-space: normal;
    overflow-wrap: anywhere;
  }
  .banner progress {
    width: 12rem;
  }
  .banner.connect {
    background: #fff6e0;
  }
  .banner.error {
    color: var(--sm-danger);
  }
  main {
    flex: 1;
    display: grid;
    grid-template-columns: 220px minmax(0, 1fr) minmax(360px, 34%);
    min-height: 0;
  }
  main:focus {
    outline: none;
  }
  /* A pane a skip link focused: its edge shows where the keys are now. */
  .panel:focus-visible {
    outline-offset: -2px;
  }
  .panel {
    min-height: 0;
    min-width: 0;
    display: flex;
    flex-direction: column;
    border-right: 1px solid var(--sm-border);
  }
  .panel:last-child {
    border-right: none;
  }
  .memory {
    overflow: auto;
    background: var(--sm-surface);
  }
  .memory sm-explorer {
    flex: 0 0 auto;
    height: min(58vh, 520px);
    min-height: 300px;
    padding: 8px 10px 10px;
  }
  /* No entry detail below (only the toast, if anything): the explorer fills the column. */
  .memory sm-explorer:is(:only-child, :has(+ sm-toast:last-child)) {
    flex: 1 1 auto;
    height: auto;
  }
  .memory sm-entry-detail {
    border-top: 1px solid var(--sm-border);
  }
  sm-chat {
    flex: 1;
    min-height: 0;
  }
  sm-conversations {
    flex: 1;
    min-height: 0;
    overflow: auto;
  }
  nav.tabs {
    display: none;
  }
  /* The tablist lays its buttons out in the nav's row. */
  nav.tabs .tablist {
    display: contents;
  }
  @media (max-width: 999px) {
    nav.tabs {
      display: flex;
      border-bottom: 1px solid var(--sm-border);
      background: var(--sm-surface);
    }
    nav.tabs button {
      flex: 1;
      border: none;
      border-radius: 0;
      border-bottom: 3px solid transparent;
      padding: 10px;
    }
    nav.tabs button[aria-selected='true'] {
      border-bottom-color: var(--sm-accent);
      font-weight: 600;
    }
    main {
      grid-template-columns: minmax(0, 1fr);
    }
    .panel {
      border-right: none;
    }
    .panel[data-hidden] {
      display: none;
    }
    header .stats {
      order: 3;
      flex-basis: 100%;
    }
  }
  /* A phone: one row of title and buttons, one line of counts, one line a banner. */
  @media (max-width: 600px) {
    header {
      gap: 2px 6px;
      padding: 6px 10px 4px;
      flex-wrap: wrap;
    }
    h1 {
      flex: 1;
      font-size: 0.9rem;
      min-width: 0;
      overflow: hidden;
      text-overflow: ellipsis;
    }
    .actions {
      gap: 4px;
      font-size: 0.8125rem;
    }
    .actions > button {
      padding: 5px 10px;
    }
    /* The gear alone; "Settings" stays its accessible name. */
    button.settings {
      padding: 5px 8px;
    }
    button.settings svg {
      color: inherit;
    }
    button.settings .label {
      position: absolute;
      width: 1px;
      height: 1px;
      overflow: hidden;
      clip-path: inset(50%);
      white-space: nowrap;
    }
    header .stats {
      display: block;
      font-size: 0.75rem;
      text-overflow: ellipsis;
    }
    .stats .extra {
      display: none;
    }
    .banner {
      gap: 4px 6px;
      padding: 4px 10px;
      font-size: 0.8rem;
      flex-wrap: nowrap;
    }
    .banner:has(details[open]) {
      flex-wrap: wrap;
    }
    .banner .text {
      white-space: nowrap;
      overflow: hidden;
      text-overflow: ellipsis;
    }
    .banner button {
      flex: none;
      padding: 2px 8px;
    }
    .banner button.more,
    sm-backup-reminder button.more {
      padding: 2px 6px;
    }
    .banner progress {
      width: 6rem;
    }
    nav.tabs button {
      padding: 7px 10px 6px;
    }
    .memory sm-explorer {
      height: min(46vh, 420px);
      min-height: 260px;
    }
  }
`;
