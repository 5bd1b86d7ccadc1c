// <sm-remember-form>'s own styles; the element puts the shared tokens and base sheet (styles.ts)
// first. It sits under the message it remembers, as the message's edit form does.
import { css } from 'lit';

export const rememberFormStyles = css`
  :host {
    display: block;
    width: min(36rem, 100%);
    font-size: 0.85rem;
  }
  :host([kind='user']) {
    align-self: flex-end;
  }
  form,
  .saved {
    padding: 8px;
    border: 1px solid var(--sm-border);
    border-left: 3px solid var(--sm-accent);
    border-radius: var(--sm-radius);
    background: var(--sm-surface);
  }
  .title {
    margin: 0 0 6px;
    font-weight: 600;
  }
  label {
    display: block;
    margin: 0 0 2px;
    color: var(--sm-muted);
  }
  textarea,
  input {
    display: block;
    width: 100%;
    margin-bottom: 6px;
  }
  textarea {
    min-height: 3.5rem;
    max-height: 12rem;
    field-sizing: content;
    resize: vertical;
    line-height: 1.4;
  }
  input {
    font-family: var(--sm-mono);
    font-size: 0.95em;
  }
  .note,
  .problem {
    margin: -2px 0 6px;
    color: var(--sm-muted);
    overflow-wrap: anywhere;
  }
  .note.warn,
  .problem {
    color: var(--sm-danger);
  }
  .note:empty {
    display: none;
  }
  .row {
    display: flex;
    flex-wrap: wrap;
    justify-content: flex-end;
    gap: 6px;
  }
  .row button {
    padding: 3px 10px;
  }
  .saved {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    justify-content: space-between;
    gap: 6px;
    border-left-color: var(--sm-ok);
  }
  .saved span {
    overflow-wrap: anywhere;
  }
  .saved .path {
    padding: 0;
    border: 0;
    background: none;
    color: var(--sm-accent);
    font-family: var(--sm-mono);
    text-align: start;
    text-decoration: underline;
    text-underline-offset: 2px;
    overflow-wrap: anywhere;
  }
  .saved .close {
    padding: 3px 10px;
  }
`;
