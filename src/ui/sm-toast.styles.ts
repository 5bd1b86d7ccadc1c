// <sm-toast>'s own styles; the element puts the shared tokens and base sheet (styles.ts) first.
import { css } from 'lit';

export const toastStyles = css`
  /* Bottom right, over the memory column on a wide screen (not over the chat's Send). */
  :host {
    position: fixed;
    z-index: 20;
    right: 16px;
    bottom: 16px;
    width: max-content;
    max-width: min(400px, calc(100vw - 24px));
    pointer-events: none;
  }
  @media (max-width: 599px) {
    :host {
      left: 12px;
      right: 12px;
      bottom: 12px;
      width: auto;
    }
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
    font-size: 0.9rem;
    pointer-events: auto;
  }
  /* Closed, it stays in the page, empty: a live region must exist before its text changes
     for screen readers to announce the change. */
  .toast:not(.open) {
    padding: 0;
    background: none;
    box-shadow: none;
    pointer-events: none;
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
