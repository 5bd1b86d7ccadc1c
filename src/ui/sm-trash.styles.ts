// <sm-trash>'s own styles; the element puts the shared tokens and base sheet (styles.ts) first.
import { css } from 'lit';

export const trashStyles = css`
  :host {
    display: flex;
    flex-direction: column;
    min-height: 0;
  }
  .head {
    display: flex;
    align-items: center;
    justify-content: space-between;
    gap: 8px;
    padding: 8px 10px;
    border-bottom: 1px solid var(--sm-border);
  }
  .head p {
    margin: 0;
    color: var(--sm-muted);
  }
  .head p:focus {
    outline: none;
  }
  .small {
    padding: 3px 10px;
    font-size: 0.85rem;
  }
  .list {
    flex: 1 1 auto;
    min-height: 0;
    overflow: auto;
    list-style: none;
    margin: 0;
    padding: 0;
  }
  .list > li {
    display: flex;
    align-items: flex-start;
    gap: 8px;
    padding: 8px 10px;
    border-bottom: 1px solid var(--sm-surface-2);
  }
  .main {
    flex: 1 1 auto;
    min-width: 0;
  }
  .path {
    padding: 0;
    border: none;
    background: none;
    color: var(--sm-accent);
    font-weight: 600;
    text-align: left;
    overflow-wrap: anywhere;
  }
  .path:hover {
    text-decoration: underline;
  }
  .meta,
  .preview {
    display: block;
    font-size: 0.8rem;
    color: var(--sm-muted);
  }
  .preview {
    overflow: hidden;
    text-overflow: ellipsis;
    white-space: nowrap;
  }
  details {
    margin-top: 2px;
    font-size: 0.8rem;
  }
  summary {
    width: fit-content;
    cursor: pointer;
    color: var(--sm-muted);
  }
  details ul {
    margin: 2px 0 0;
    padding-left: 18px;
    overflow-wrap: anywhere;
  }
  .empty,
  [role='alert'] {
    margin: 0;
    padding: 12px;
    color: var(--sm-muted);
  }
  [role='alert'] {
    color: var(--sm-danger);
  }
  dialog {
    max-width: min(420px, calc(100vw - 32px));
    padding: 18px;
    border: 1px solid var(--sm-border);
    border-radius: var(--sm-radius);
    background: var(--sm-surface);
    color: var(--sm-text);
    box-shadow: 0 8px 28px rgb(0 0 0 / 0.25);
  }
  dialog::backdrop {
    background: rgb(20 24 32 / 0.45);
  }
  dialog h2 {
    margin: 0 0 8px;
    font-size: 1.1rem;
  }
  dialog p {
    margin: 0 0 14px;
    line-height: 1.45;
  }
  .actions {
    display: flex;
    justify-content: flex-end;
    gap: 8px;
  }
`;
