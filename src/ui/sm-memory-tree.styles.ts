// <sm-memory-tree>'s own styles; the element puts the shared tokens and base sheet (styles.ts)
// first, then the indentation rules.
import { css, unsafeCSS } from 'lit';
import { MAX_DEPTH } from '../memory/paths';

/** Row height in px, in the rules and in the element's windowing (which needs it fixed). */
export const ROW_H = 28;

/** Indentation per `aria-level`, one static rule per level a path can have: no style attributes
 * under the CSP. */
export const indentRules = unsafeCSS(
  Array.from(
    { length: MAX_DEPTH },
    (_, i) => `.row[aria-level='${i + 1}'] { padding-left: ${4 + i * 16}px; }`,
  ).join('\n'),
);

export const memoryTreeStyles = css`
  :host {
    display: block;
    overflow: auto;
    overscroll-behavior: contain;
    font-size: 0.875rem;
    background: var(--sm-surface);
  }
  [role='tree'] {
    padding: 2px 0;
    outline: none;
  }
  .row {
    display: flex;
    align-items: center;
    gap: 6px;
    height: ${ROW_H}px;
    padding: 0 10px 0 4px;
    cursor: pointer;
    user-select: none;
    white-space: nowrap;
    border-radius: 4px;
    margin: 0 4px;
  }
  .row:hover {
    background: var(--sm-surface-2);
  }
  .row[aria-selected='true'] {
    background: #dfe6fa;
    box-shadow: inset 3px 0 0 var(--sm-accent);
  }
  .row:focus-visible {
    outline: 2px solid var(--sm-accent);
    outline-offset: -2px;
  }
  .twisty {
    flex: none;
    width: 18px;
    height: 22px;
    display: grid;
    place-items: center;
    border-radius: 4px;
    color: var(--sm-muted);
  }
  .twisty:hover {
    background: var(--sm-border);
    color: var(--sm-text);
  }
  .twisty::before {
    content: '';
    width: 6px;
    height: 6px;
    border-right: 1.5px solid currentColor;
    border-bottom: 1.5px solid currentColor;
    transform: rotate(-45deg);
    transition: transform 0.12s;
  }
  .row[aria-expanded='true'] .twisty::before {
    transform: rotate(45deg) translate(-1px, -1px);
  }
  .leaf {
    flex: none;
    width: 18px;
    display: grid;
    place-items: center;
  }
  .leaf::before {
    content: '';
    width: 5px;
    height: 5px;
    border-radius: 1px;
    background: var(--sm-border);
  }
  .name {
    flex: 1 1 auto;
    min-width: 0;
    overflow: hidden;
    text-overflow: ellipsis;
  }
  .heading-only .name {
    font-weight: 600;
  }
  .meta {
    flex: none;
    display: flex;
    align-items: center;
    gap: 8px;
    color: var(--sm-muted);
    font-size: 0.75rem;
    font-variant-numeric: tabular-nums;
  }
  .count {
    min-width: 1.6em;
    padding: 0 6px;
    border-radius: 9px;
    background: var(--sm-surface-2);
    text-align: center;
    line-height: 18px;
  }
  .age {
    display: inline-flex;
    align-items: center;
    gap: 5px;
    min-width: 4.6em;
    justify-content: flex-end;
  }
  .dot {
    width: 8px;
    height: 8px;
    flex: none;
  }
  .spacer {
    pointer-events: none;
  }
  .empty {
    margin: 0;
    padding: 12px;
    color: var(--sm-muted);
  }
  @media (pointer: coarse) {
    .twisty {
      width: 24px;
    }
  }
`;
