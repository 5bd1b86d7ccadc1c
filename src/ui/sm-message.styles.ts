// <sm-message>'s own styles; the element puts the shared tokens and base sheet (styles.ts) first.
import { css } from 'lit';

export const messageStyles = css`
  :host {
    position: relative;
    display: flex;
    flex-direction: column;
    align-items: flex-start;
    scroll-margin: 24px;
  }
  :host([kind='user']) {
    align-items: flex-end;
  }
  /* The message's own box: the list's Tab stop (see current); it lays out what the host did. */
  .item {
    align-self: stretch;
    display: flex;
    flex-direction: column;
    align-items: inherit;
    border-radius: 10px;
  }
  .item:focus-visible {
    outline-offset: 3px;
  }
  .bubble {
    max-width: min(46rem, 100%);
    min-width: 0;
    padding: 8px 12px;
    border-radius: 10px;
    line-height: 1.5;
    overflow-wrap: anywhere;
    transition: box-shadow 0.3s;
  }
  :host([kind='user']) .bubble {
    max-width: min(36rem, 88%);
    background: #e6ecfb;
    border-bottom-right-radius: 3px;
  }
  .text {
    white-space: pre-wrap;
  }
  :host([kind='assistant']) .bubble {
    background: var(--sm-surface);
    border: 1px solid var(--sm-border);
    border-bottom-left-radius: 3px;
  }
  :host([kind='assistant']) .bubble.empty {
    display: none;
  }
  .thought {
    margin: 0 0 0.4em;
    color: var(--sm-muted);
    font-size: 0.92em;
  }
  .thought summary {
    cursor: pointer;
    width: fit-content;
  }
  .thought-text {
    white-space: pre-wrap;
    margin-top: 0.3em;
    padding-left: 0.6em;
    border-left: 2px solid var(--sm-border);
  }
  :host([highlighted]) .bubble,
  :host([highlighted]) .bubble.empty + .tools {
    box-shadow: 0 0 0 3px #f2c94c;
    border-radius: 10px;
  }
  :host([kind='notice']) {
    align-items: center;
  }
  .notice {
    max-width: 40rem;
    font-size: 0.85rem;
    color: var(--sm-muted);
    text-align: center;
    white-space: pre-wrap;
  }
  .notice::before {
    content: 'ℹ︎ ';
  }
  .speaker {
    display: block;
    margin-bottom: 2px;
    font-size: 0.78rem;
    font-weight: 600;
    color: var(--sm-muted);
  }
  .who {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip-path: inset(50%);
    white-space: nowrap;
  }
  /* Finished blocks sit in .chunk boxes (see putBlocks), the block arriving after them. */
  /*
   * A box of finished blocks is contained: each frame's compositing-inputs update (which walked
   * every block of a long reply, 8-12 ms a frame at 1 MB) skips the boxes that did not change.
   * A contained box is a formatting context of its own, so margins do not collapse across its
   * edge: a heading right after one gets the difference to the 0.6em kept inside it.
   */
  .md > .chunk {
    contain: layout paint;
  }
  .md > .chunk + .chunk > :is(h1, h2, h3, h4, h5, h6):first-child,
  .md > .chunk + :is(h1, h2, h3, h4, h5, h6) {
    margin-top: 0.2em;
  }
  .md > :first-child,
  .md > .chunk:first-child > :first-child {
    margin-top: 0;
  }
  .md > :last-child,
  .md > .chunk:last-child > :last-child {
    margin-bottom: 0;
  }
  .md p,
  .md ul,
  .md ol,
  .md pre,
  .md blockquote,
  .md table {
    margin: 0 0 0.6em;
  }
  .md h1,
  .md h2,
  .md h3,
  .md h4,
  .md h5,
  .md h6 {
    margin: 0.8em 0 0.4em;
    font-size: 1em;
    line-height: 1.3;
  }
  .md h1 {
    font-size: 1.2em;
  }
  .md h2 {
    font-size: 1.1em;
  }
  .md ul,
  .md ol {
    padding-inline-start: 1.4em;
  }
  .md li {
    unicode-bidi: plaintext;
  }
  .md li + li {
    margin-top: 0.15em;
  }
  .md code {
    background: var(--sm-surface-2);
    padding: 0.1em 0.3em;
    border-radius: 3px;
  }
  .md pre {
    background: var(--sm-surface-2);
    padding: 8px 10px;
    border-radius: var(--sm-radius);
    overflow-x: auto;
    white-space: pre;
    overflow-wrap: normal;
  }
  .md pre code {
    background: none;
    padding: 0;
  }
  .md blockquote {
    padding-inline-start: 10px;
    border-inline-start: 3px solid var(--sm-border);
    color: var(--sm-muted);
  }
  .md a[href] {
    color: var(--sm-accent);
  }
  .md table {
    border-collapse: collapse;
    display: block;
    overflow-x: auto;
  }
  .md th,
  .md td {
    border: 1px solid var(--sm-border);
    padding: 3px 8px;
  }
  .md hr {
    border: 0;
    border-top: 1px solid var(--sm-border);
  }
  .caret,
  .md .caret-after::after {
    content: '';
    display: inline-block;
    width: 0.5em;
    height: 1em;
    margin-left: 2px;
    vertical-align: text-bottom;
    background: var(--sm-muted);
    animation: blink 1s steps(2) infinite;
  }
  @keyframes blink {
    to {
      visibility: hidden;
    }
  }
  .mark {
    margin-top: 3px;
    font-size: 0.78rem;
    color: var(--sm-muted);
  }
  .mark.partial {
    color: var(--sm-warn);
  }
  .tools {
    display: flex;
    flex-direction: column;
    gap: 6px;
    width: min(46rem, 100%);
  }
  .tools.some {
    margin-top: 6px;
  }
  .bubble.empty + .tools.some {
    margin-top: 0;
  }
  .recalled {
    margin-top: 4px;
    max-width: min(46rem, 100%);
    font-size: 0.78rem;
    color: var(--sm-muted);
    overflow-wrap: anywhere;
  }
  .recalled a {
    color: var(--sm-accent);
    text-decoration: underline;
    text-underline-offset: 2px;
    cursor: pointer;
  }
  .recalled a.path {
    font-family: var(--sm-mono);
  }
  .recalled .turn.gone {
    font-style: italic;
  }
  .controls {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: 2px;
    margin-top: 2px;
    min-height: 28px;
  }
  /* The controls that show on hover or focus keep their row under the message, so they never
     cover its words (they floated over the bubble's top corner). */
  @media (hover: hover) {
    :host(:not(:hover):not(:focus-within)) .controls .quiet {
      opacity: 0;
    }
  }
  .controls button {
    height: 28px;
    min-width: 28px;
    padding: 0 6px;
    border: 0;
    background: none;
    color: var(--sm-muted);
    border-radius: 4px;
    display: inline-flex;
    align-items: center;
    gap: 4px;
    font-size: 0.8rem;
  }
  .controls button:hover:not(:disabled) {
    background: var(--sm-border);
    color: var(--sm-text);
  }
  .controls button:disabled {
    opacity: 0.45;
  }
  .controls button.outlined {
    border: 1px solid var(--sm-border);
    color: var(--sm-text);
  }
  .controls svg {
    width: 15px;
    height: 15px;
    fill: none;
    stroke: currentColor;
    stroke-width: 1.7;
    stroke-linecap: round;
    stroke-linejoin: round;
  }
  .alts {
    display: inline-flex;
    align-items: center;
    font-size: 0.8rem;
    color: var(--sm-muted);
    font-variant-numeric: tabular-nums;
  }
  .confirm,
  form.edit {
    width: min(36rem, 100%);
    margin-top: 4px;
    padding: 8px;
    border: 1px solid var(--sm-border);
    border-radius: var(--sm-radius);
    background: var(--sm-surface);
    font-size: 0.85rem;
  }
  .confirm {
    border-color: var(--sm-danger);
    background: #fdf1f0;
  }
  .confirm p,
  form.edit p {
    margin: 0 0 6px;
  }
  form.edit textarea {
    width: 100%;
    min-height: 4rem;
    max-height: 16rem;
    field-sizing: content;
    resize: vertical;
    line-height: 1.4;
    padding: 6px 8px;
    margin-bottom: 6px;
  }
  .row {
    display: flex;
    flex-wrap: wrap;
    gap: 6px;
  }
  .row button {
    padding: 3px 10px;
  }
  .confirm button.danger {
    background: var(--sm-danger);
    border-color: var(--sm-danger);
    color: #fff;
  }
  /* Remember selection: by the end of the words selected (placed by the element). */
  .pick {
    position: absolute;
    z-index: 2;
    display: inline-flex;
    align-items: center;
    gap: 4px;
    padding: 3px 8px;
    font-size: 0.8rem;
    white-space: nowrap;
    color: var(--sm-accent);
    border-color: var(--sm-accent);
    box-shadow: 0 1px 4px rgb(0 0 0 / 18%);
  }
  .pick svg {
    width: 14px;
    height: 14px;
    fill: none;
    stroke: currentColor;
    stroke-width: 1.7;
    stroke-linejoin: round;
  }
  @media (prefers-reduced-motion: reduce) {
    .caret,
    .md .caret-after::after {
      animation: none;
    }
  }
`;
