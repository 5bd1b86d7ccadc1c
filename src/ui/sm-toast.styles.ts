// <sm-toast>'s own styles; the element puts the shared tokens and base sheet (styles.ts) first.
import { css } from 'lit';

export const toastStyles = css`
  /* In the page's flow at the foot of the memory column (sm-app puts it there): while open it
     takes room from the pane above rather than covering its last rows and buttons. */
  :host {
    display: block;
    flex: none;
  }
  .toast {
    display: flex;
    align-items: center;
    gap: 6px 12px;
    padding: 8px 8px 8px 14px;
    border-radius: var(--sm-radius);
    background: #1d2430;
    color: #ffffff;
    box-shadow: 0 4px 16px rgb(0 0 0 / 0.25);
    margin: 6px 10px 10px;
    font-size: 0.9rem;
  }
  /* Closed, it stays in the page, empty: a live region must exist before its text changes
     for screen readers to announce the change. */
  .toast:not(.open) {
    margin: 0;
    padding: 0;
    background: none;
    box-shadow: none;
  }
  [role='status'] {
    flex: 1 1 auto;
    min-width: 0;
    margin: 0;
    overflow-wrap: anywhere;
  }
  button {
    flex: none;
    padding: 4px 10px;
    border-color: transparent;
    background: transparent;
    color: #ffffff;
  }
  button.action {
    color: #a9c1ff;
    font-weight: 600;
  }
  button:hover {
    background: rgb(255 255 255 / 0.12);
  }
  button:focus-visible {
    outline-color: #a9c1ff;
  }
  .close {
    font-size: 1.1rem;
    line-height: 1;
  }
`;
