// <sm-keeper-card>'s own styles; the element puts the shared tokens, base and card sheets (styles.ts) first.
import { css } from 'lit';

export const keeperCardStyles = css`
  :host {
    display: block;
    /* As wide as what it says, like a reply's bubble, not the whole column. */
    align-self: flex-start;
    width: fit-content;
    min-width: min(18rem, 100%);
    max-width: min(46rem, 100%);
    font-size: 0.85rem;
  }
  .card {
    border-left-color: var(--sm-ok);
  }
  .card.is-undone {
    border-left-color: var(--sm-muted);
  }
  .head {
    display: flex;
    align-items: center;
    justify-content: space-between;
    gap: 8px;
    min-height: 28px;
  }
  .title {
    font-weight: 600;
    font-size: 0.78rem;
    text-transform: uppercase;
    letter-spacing: 0.04em;
    color: var(--sm-muted);
  }
  button.undo {
    padding: 2px 10px;
    font-size: 0.8rem;
  }
  .state {
    font-weight: 600;
    color: var(--sm-muted);
  }
  .ops {
    margin: 2px 0 0;
    padding: 0;
    list-style: none;
  }
  .ops li {
    overflow-wrap: anywhere;
  }
  .ops li + li {
    margin-top: 2px;
  }
  .op {
    color: var(--sm-ok);
    font-weight: 600;
  }
  .is-undone .op {
    color: var(--sm-muted);
  }
  button.path {
    padding: 0;
    border: 0;
    background: none;
    color: var(--sm-accent);
    font-family: var(--sm-mono);
    font-size: 0.82rem;
    text-align: left;
    text-decoration: underline;
    text-underline-offset: 2px;
    overflow-wrap: anywhere;
  }
  .content::before {
    content: ' — ';
    color: var(--sm-muted);
  }
  .left {
    margin: 4px 0 0;
    color: var(--sm-warn);
  }
`;
