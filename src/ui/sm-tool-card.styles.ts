// <sm-tool-card>'s own styles; the element puts the shared tokens, base and card sheets (styles.ts) first.
import { css } from 'lit';

export const toolCardStyles = css`
  :host {
    display: block;
    font-size: 0.875rem;
  }
  .card.is-ok {
    border-left-color: var(--sm-ok);
  }
  .card.is-missing {
    border-left-color: var(--sm-warn);
  }
  .card.is-error {
    border-left-color: var(--sm-danger);
  }
  .head {
    display: flex;
    flex-wrap: wrap;
    align-items: baseline;
    gap: 2px 8px;
    min-width: 0;
  }
  .name {
    font-family: var(--sm-mono);
    font-weight: 600;
    font-size: 0.85rem;
  }
  button.path {
    padding: 0;
    border: 0;
    background: none;
    color: var(--sm-accent);
    font-family: var(--sm-mono);
    font-size: 0.85rem;
    text-align: left;
    text-decoration: underline;
    text-underline-offset: 2px;
    overflow-wrap: anywhere;
  }
  button.path:hover {
    text-decoration-thickness: 2px;
  }
  .path-text {
    font-family: var(--sm-mono);
    font-size: 0.85rem;
    overflow-wrap: anywhere;
  }
  .arrow {
    color: var(--sm-muted);
  }
  details {
    margin-top: 2px;
  }
  summary {
    cursor: pointer;
    color: var(--sm-muted);
    width: fit-content;
    max-width: 100%;
    overflow-wrap: anywhere;
  }
  summary:focus-visible {
    outline: 2px solid var(--sm-accent);
    outline-offset: 1px;
  }
  .is-ok summary .outcome {
    color: var(--sm-ok);
  }
  .is-missing summary .outcome {
    color: var(--sm-warn);
  }
  .is-error summary .outcome {
    color: var(--sm-danger);
  }
  .is-pending summary .outcome::after {
    content: '';
    display: inline-block;
    width: 0.7em;
    height: 0.7em;
    margin-left: 6px;
    border: 2px solid var(--sm-border);
    border-top-color: var(--sm-accent);
    border-radius: 50%;
    vertical-align: -0.05em;
    animation: spin 0.8s linear infinite;
  }
  @keyframes spin {
    to {
      transform: rotate(360deg);
    }
  }
  @media (prefers-reduced-motion: reduce) {
    .is-pending summary .outcome::after {
      animation: none;
    }
  }
  h4 {
    margin: 8px 0 2px;
    font-size: 0.75rem;
    font-weight: 600;
    text-transform: uppercase;
    letter-spacing: 0.04em;
    color: var(--sm-muted);
  }
  pre {
    margin: 0;
    padding: 6px 8px;
    max-height: 16rem;
    overflow: auto;
    background: var(--sm-surface);
    border: 1px solid var(--sm-border);
    border-radius: 4px;
    font-size: 0.8rem;
    white-space: pre-wrap;
    overflow-wrap: anywhere;
  }
`;
