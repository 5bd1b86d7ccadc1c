// <sm-memory-search>'s own styles; the element puts the shared tokens and base sheet (styles.ts) first.
import { css } from 'lit';

export const memorySearchStyles = css`
  :host {
    display: block;
    font-size: 0.875rem;
    --sm-mark: #fde68a;
    --sm-recency: #a9b8ea;
  }
  form {
    display: grid;
    grid-template-columns: 1fr auto;
    gap: 4px 6px;
    align-items: end;
    /* Stays in reach while a long result list scrolls under it. */
    position: sticky;
    top: 0;
    z-index: 1;
    padding-bottom: 2px;
    background: var(--sm-search-bg, var(--sm-surface));
  }
  .caption {
    grid-column: 1 / -1;
    display: flex;
    flex-wrap: wrap;
    gap: 4px 8px;
    align-items: center;
    min-width: 0;
    font-size: 0.8125rem;
  }
  label {
    flex: none;
    font-weight: 600;
  }
  .scope {
    min-width: 0;
    color: var(--sm-muted);
  }
  .scope b {
    color: var(--sm-text);
    font-weight: 500;
  }
  .scopes {
    display: inline-flex;
    min-width: 0;
    max-width: 100%;
    padding: 1px;
    border: 1px solid var(--sm-border);
    border-radius: var(--sm-radius);
    background: var(--sm-surface-2);
  }
  .scopes button {
    min-width: 0;
    padding: 3px 10px;
    border: none;
    border-radius: 4px;
    background: none;
    color: var(--sm-muted);
    font-size: 0.8125rem;
    white-space: nowrap;
    overflow: hidden;
    text-overflow: ellipsis;
  }
  .scopes button.heading {
    flex: 0 1 auto;
    max-width: 16rem;
  }
  .scopes button.all {
    flex: none;
  }
  .scopes button[aria-pressed='true'] {
    background: var(--sm-surface);
    color: var(--sm-text);
    box-shadow: 0 1px 2px rgb(0 0 0 / 0.12);
  }
  .hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip-path: inset(50%);
    white-space: nowrap;
  }
  input {
    min-width: 0;
    width: 100%;
  }
  .summary {
    display: flex;
    align-items: baseline;
    justify-content: space-between;
    gap: 8px;
  }
  .status {
    margin: 8px 0 0;
    color: var(--sm-muted);
  }
  .status.error {
    color: var(--sm-danger);
  }
  button.link {
    flex: none;
    padding: 2px 4px;
    border: none;
    background: none;
    color: var(--sm-accent);
    font-size: 0.8125rem;
  }
  button.link:hover {
    text-decoration: underline;
  }
  ol {
    list-style: none;
    margin: 8px 0 0;
    padding: 0;
    display: grid;
    gap: 6px;
  }
  li.hit {
    padding: 8px 10px;
    border: 1px solid var(--sm-border);
    border-radius: var(--sm-radius);
    background: var(--sm-surface);
    min-width: 0;
  }
  li.hit.weak {
    border-style: dashed;
    background: var(--sm-bg, #f6f7f9);
  }
  .head {
    display: flex;
    flex-wrap: wrap;
    align-items: baseline;
    gap: 2px 10px;
    min-width: 0;
  }
  button.path {
    padding: 0;
    border: none;
    background: none;
    color: var(--sm-accent);
    font-weight: 600;
    text-align: start;
    overflow-wrap: anywhere;
    min-width: 0;
  }
  button.path:hover {
    text-decoration: underline;
  }
  .kind {
    flex: none;
    font-size: 0.75rem;
    color: var(--sm-muted);
  }
  .match {
    margin-left: auto;
    flex: none;
    display: inline-flex;
    align-items: center;
    gap: 6px;
    font-size: 0.75rem;
    color: var(--sm-muted);
    cursor: help;
  }
  .match .word {
    color: var(--sm-text);
    font-weight: 500;
  }
  .weak .match .word {
    color: var(--sm-muted);
    font-weight: 400;
  }
  svg.bar {
    width: 48px;
    height: 6px;
    border-radius: 3px;
    background: var(--sm-surface-2);
    align-self: center;
  }
  svg.bar .rel {
    fill: var(--sm-accent);
  }
  svg.bar .rec {
    fill: var(--sm-recency);
  }
  mark {
    background: var(--sm-mark);
    color: inherit;
    border-radius: 2px;
    padding: 0 1px;
  }
  .preview {
    margin: 4px 0 0;
    color: var(--sm-text);
    overflow-wrap: anywhere;
    display: -webkit-box;
    -webkit-box-orient: vertical;
    -webkit-line-clamp: 3;
    overflow: hidden;
  }
  .weak .preview {
    color: var(--sm-muted);
  }
  .best {
    margin: 4px 0 0;
    color: var(--sm-muted);
  }
  .why {
    margin: 4px 0 0;
    font-size: 0.75rem;
    color: var(--sm-muted);
    font-style: italic;
  }
  ul.chunks {
    list-style: none;
    margin: 6px 0 0;
    padding: 0 0 0 8px;
    border-left: 2px solid var(--sm-surface-2);
    display: grid;
    gap: 2px;
    font-size: 0.8125rem;
    color: var(--sm-muted);
  }
  ul.chunks li {
    overflow-wrap: anywhere;
  }
  .role {
    font-weight: 600;
    color: var(--sm-text);
  }
  .more {
    display: flex;
    flex-wrap: wrap;
    align-items: baseline;
    gap: 4px 12px;
    margin: 6px 0 0;
    color: var(--sm-muted);
    font-size: 0.8125rem;
  }
  .more button.link {
    padding: 2px 0;
  }
`;
