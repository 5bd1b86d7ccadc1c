// <sm-conversations>' own styles; the element puts the shared tokens and base sheet (styles.ts) first.
import { css } from 'lit';

export const conversationsStyles = css`
  :host {
    display: flex;
    flex-direction: column;
    min-height: 0;
    min-width: 0;
    font-size: 0.9rem;
  }
  .head {
    display: flex;
    align-items: center;
    justify-content: space-between;
    gap: 8px;
    padding: 10px 10px 8px;
  }
  h2 {
    margin: 0;
    font-size: 0.8rem;
    font-weight: 600;
    text-transform: uppercase;
    letter-spacing: 0.05em;
    color: var(--sm-muted);
  }
  .new {
    padding: 4px 10px;
  }
  ul {
    list-style: none;
    margin: 0;
    padding: 0 6px 8px;
    overflow-y: auto;
    flex: 1;
    min-height: 0;
  }
  li {
    position: relative;
    border-radius: var(--sm-radius);
    margin-bottom: 2px;
  }
  li:hover {
    background: var(--sm-surface-2);
  }
  li.active {
    background: #e6ecfb;
  }
  /* The title has the row's whole width, on up to three lines (a title made from a message,
     48 characters at most, fits whole, in bold too); Rename and Delete sit beside the time
     below it. Two chats that start alike read apart. */
  .row {
    position: relative;
  }
  button.open {
    width: 100%;
    display: flex;
    flex-direction: column;
    align-items: flex-start;
    gap: 1px;
    padding: 6px 8px 4px;
    border: 0;
    background: none;
    text-align: left;
  }
  .title {
    max-width: 100%;
    display: -webkit-box;
    -webkit-box-orient: vertical;
    -webkit-line-clamp: 3;
    line-clamp: 3;
    overflow: hidden;
    overflow-wrap: anywhere;
    line-height: 1.3;
  }
  li.active .title {
    font-weight: 600;
  }
  .when {
    /* As tall as the buttons beside it, and clear of them. */
    display: flex;
    align-items: center;
    min-height: 28px;
    max-width: calc(100% - 64px);
    font-size: 0.75rem;
    color: var(--sm-muted);
  }
  .actions {
    position: absolute;
    right: 4px;
    bottom: 4px;
    display: flex;
    gap: 2px;
  }
  button.icon {
    width: 28px;
    height: 28px;
    padding: 0;
    border: 0;
    background: none;
    color: var(--sm-muted);
    border-radius: 4px;
    display: inline-grid;
    place-items: center;
  }
  button.icon:hover {
    background: var(--sm-border);
    color: var(--sm-text);
  }
  button.icon svg {
    width: 15px;
    height: 15px;
    fill: none;
    stroke: currentColor;
    stroke-width: 1.7;
    stroke-linecap: round;
    stroke-linejoin: round;
  }
  @media (hover: hover) {
    li:not(.active):not(:hover):not(:focus-within) .actions {
      opacity: 0;
    }
  }
  form.rename {
    display: flex;
    padding: 4px;
  }
  form.rename input {
    flex: 1;
    min-width: 0;
    padding: 4px 6px;
  }
  .confirm {
    padding: 6px 8px 8px;
    border: 1px solid var(--sm-danger);
    border-radius: var(--sm-radius);
    background: #fdf1f0;
  }
  .confirm p {
    margin: 0 0 6px;
    font-size: 0.85rem;
  }
  .confirm .buttons {
    display: flex;
    gap: 6px;
  }
  .confirm button {
    padding: 3px 10px;
  }
  .confirm button.danger {
    background: var(--sm-danger);
    color: #fff;
  }
  .empty {
    padding: 8px 12px;
    color: var(--sm-muted);
  }
`;
