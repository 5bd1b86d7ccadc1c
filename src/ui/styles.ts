// Shared styles: design tokens as CSS custom properties, plus base rules every component adopts.
import { css } from 'lit';

export const tokens = css`
  :host {
    --sm-font: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif;
    --sm-mono: ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace;
    --sm-bg: #f6f7f9;
    --sm-surface: #ffffff;
    --sm-surface-2: #eef1f5;
    --sm-border: #d5dae1;
    --sm-text: #1d2430;
    --sm-muted: #5d6877;
    --sm-accent: #3556c8;
    --sm-accent-text: #ffffff;
    --sm-danger: #b3261e;
    --sm-ok: #1e7d4f;
    --sm-warn: #8a5a00;
    --sm-radius: 6px;
    --sm-gap: 12px;
    font-family: var(--sm-font);
    color: var(--sm-text);
  }
`;

export const base = css`
  :host {
    box-sizing: border-box;
  }
  *,
  *::before,
  *::after {
    box-sizing: inherit;
  }
  button {
    font: inherit;
    padding: 6px 12px;
    border: 1px solid var(--sm-border);
    border-radius: var(--sm-radius);
    background: var(--sm-surface);
    color: var(--sm-text);
    cursor: pointer;
  }
  button.primary {
    background: var(--sm-accent);
    border-color: var(--sm-accent);
    color: var(--sm-accent-text);
  }
  button.danger {
    color: var(--sm-danger);
    border-color: var(--sm-danger);
  }
  button:disabled,
  button[aria-disabled='true'] {
    opacity: 0.55;
    cursor: default;
  }
  button:focus-visible,
  input:focus-visible,
  textarea:focus-visible,
  select:focus-visible,
  [tabindex]:focus-visible {
    outline: 2px solid var(--sm-accent);
    outline-offset: 1px;
  }
  input,
  textarea,
  select {
    font: inherit;
    padding: 6px 8px;
    border: 1px solid var(--sm-border);
    border-radius: var(--sm-radius);
    background: var(--sm-surface);
    color: var(--sm-text);
  }
  .muted {
    color: var(--sm-muted);
  }
  .error {
    color: var(--sm-danger);
  }
  pre,
  code {
    font-family: var(--sm-mono);
    font-size: 0.9em;
  }
`;

/** A card in the chat (a tool call's, the memory keeper's): a box with a coloured mark on the left. */
export const card = css`
  .card {
    border: 1px solid var(--sm-border);
    border-left: 3px solid var(--sm-muted);
    border-radius: var(--sm-radius);
    background: var(--sm-surface-2);
    padding: 6px 10px;
  }
`;
