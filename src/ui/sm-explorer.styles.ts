// <sm-explorer>'s own styles; the element puts the shared tokens and base sheet (styles.ts) first.
// The dividers' defaults and least heights come from split-layout.ts, as the element's do.
import { css } from 'lit';
import { DEFAULT_SPLIT, MIN_HEIGHT } from './split-layout';

export const explorerStyles = css`
  :host {
    display: flex;
    flex-direction: column;
    gap: 8px;
    height: 100%;
    min-height: 0;
    font-size: 0.875rem;
  }
  .bar {
    display: flex;
    gap: 8px;
    align-items: center;
    flex-wrap: wrap;
  }
  .bar input {
    flex: 1 1 10rem;
    min-width: 0;
  }
  [role='tablist'] {
    display: inline-flex;
    flex: none;
    padding: 2px;
    border: 1px solid var(--sm-border);
    border-radius: var(--sm-radius);
    background: var(--sm-surface-2);
  }
  [role='tab'] {
    padding: 4px 14px;
    border: none;
    border-radius: 4px;
    background: none;
    color: var(--sm-muted);
  }
  [role='tab'][aria-selected='true'] {
    background: var(--sm-surface);
    color: var(--sm-text);
    box-shadow: 0 1px 2px rgb(0 0 0 / 0.12);
  }
  .summary {
    margin: -2px 0 0;
    font-size: 0.75rem;
    color: var(--sm-muted);
  }
  /* The plain count is in the app's header already: read here, not drawn, unless filtering. */
  .summary.quiet {
    position: absolute;
    width: 1px;
    height: 1px;
    margin: 0;
    overflow: hidden;
    clip-path: inset(50%);
    white-space: nowrap;
  }
  .split {
    flex: 1 1 0;
    min-height: 0;
    display: flex;
    flex-direction: column;
    gap: 2px;
  }
  .views {
    position: relative;
    /* Basis 0: the tree's content height must not squeeze the search below. */
    flex: 1 1 0;
    min-height: ${MIN_HEIGHT.views}px;
    display: flex;
    flex-direction: column;
    border: 1px solid var(--sm-border);
    border-radius: var(--sm-radius);
    background: var(--sm-surface);
    overflow: hidden;
  }
  [role='tabpanel'] {
    flex: 1 1 auto;
    min-height: 0;
    display: flex;
    flex-direction: column;
  }
  [role='tabpanel'][hidden] {
    display: none;
  }
  sm-memory-tree {
    flex: 1 1 auto;
    min-height: 0;
  }
  sm-memory-map {
    flex: 1 1 auto;
    min-height: 0;
    padding: 6px;
  }
  sm-trash {
    flex: 1 1 auto;
    min-height: 0;
  }
  .search {
    flex: none;
    overflow: auto;
    overscroll-behavior: contain;
  }
  /* With results, the divider's share (custom properties set on the host) splits the room. */
  .split.results .views {
    flex-grow: var(--sm-views-share, ${DEFAULT_SPLIT.views});
  }
  .split.results .search {
    flex: 1 1 0;
    flex-grow: calc(1 - var(--sm-views-share, ${DEFAULT_SPLIT.views}));
    min-height: ${MIN_HEIGHT.search}px;
  }
  [role='separator'] {
    flex: none;
    position: relative;
    height: 12px;
    margin: 0 -4px;
    border-radius: 4px;
    cursor: row-resize;
    touch-action: none;
    user-select: none;
  }
  [role='separator']::before {
    content: '';
    position: absolute;
    left: 50%;
    top: 4px;
    width: 40px;
    height: 4px;
    margin-left: -20px;
    border-radius: 2px;
    background: var(--sm-border);
  }
  [role='separator']:hover::before,
  [role='separator'].dragging::before {
    background: var(--sm-muted);
  }
  [role='separator']:focus-visible {
    outline: 2px solid var(--sm-accent);
    outline-offset: -2px;
  }
  [role='separator'].foot {
    margin-bottom: -8px;
  }
  .status {
    margin: 0;
    padding: 12px;
    color: var(--sm-muted);
  }
  .status.error {
    color: var(--sm-danger);
  }
`;
