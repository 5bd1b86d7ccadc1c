// <sm-settings>' own styles; the element puts the shared tokens and base sheet (styles.ts) first.
import { css } from 'lit';

export const settingsStyles = css`
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
    /* A fieldset is as wide as its widest content by default: a file input would overflow. */
    min-width: 0;
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
    grid-template-columns: repeat(auto-fill, minmax(200px, 1fr));
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
  /* Label, input, hint and message rows line up across the columns, whatever wraps. */
  .grid .field {
    display: grid;
    grid-row: span 4;
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
  .field-error:empty {
    display: none;
  }
  [aria-invalid='true'] {
    border-color: var(--sm-danger);
  }
  progress {
    width: 100%;
  }
  .test {
    display: flex;
    flex-wrap: wrap;
    align-items: flex-start;
    gap: 6px 10px;
    margin: 0 0 10px;
  }
  .test > div {
    flex: 1 1 14rem;
    min-width: 0;
    font-size: 0.85rem;
  }
  .test ul {
    margin: 0;
    padding: 0;
    list-style: none;
  }
  .test li {
    overflow-wrap: anywhere;
  }
  .test .label {
    font-weight: 600;
  }
  .test-error {
    margin: 0;
    color: var(--sm-danger);
  }
  .test-ok::before {
    content: '✓ ';
    color: var(--sm-ok);
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
`;
