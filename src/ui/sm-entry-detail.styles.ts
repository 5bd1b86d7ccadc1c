// <sm-entry-detail>'s own styles; the element puts the shared tokens and base sheet (styles.ts) first.
import { css } from 'lit';

export const entryDetailStyles = css`
  :host {
    display: block;
    /* The height left below the explorer, scrolled here: the explorer stays in view. */
    flex: 1 1 0;
    min-height: 0;
    overflow: auto;
    overscroll-behavior: contain;
    /* What is typed or focused is kept above the edit form's sticky Save bar (form.edit .actions). */
    scroll-padding-bottom: 72px;
    /* An Undo toast takes its own room below this pane (sm-toast, in the column's flow). */
    padding: 12px 16px 16px;
    background: var(--sm-surface);
    line-height: 1.45;
    min-width: 0;
  }
  .crumbs ol {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    list-style: none;
    margin: 0;
    padding: 0;
    font-size: 0.85rem;
    color: var(--sm-muted);
  }
  .crumbs li {
    /* A long name (128 characters of one word) wraps instead of widening the pane. */
    min-width: 0;
    overflow-wrap: anywhere;
  }
  .crumbs li + li::before {
    /* A separator to the eye only: screen readers have the list. */
    content: '/' / '';
    padding: 0 2px;
    color: var(--sm-border);
  }
  .link {
    border: none;
    background: none;
    padding: 1px 3px;
    color: var(--sm-accent);
    text-align: left;
  }
  .link:hover {
    text-decoration: underline;
  }
  .crumbs [aria-current] {
    padding: 1px 3px;
    color: var(--sm-text);
  }
  header {
    display: flex;
    flex-wrap: wrap;
    align-items: baseline;
    justify-content: space-between;
    gap: 8px 16px;
    margin: 4px 0 12px;
  }
  h2 {
    margin: 0;
    font-size: 1.3rem;
    font-weight: 600;
    overflow-wrap: anywhere;
  }
  h2:focus {
    outline: none;
  }
  h2 .kind {
    margin-left: 2px;
    font-size: 0.8rem;
    font-weight: 400;
    color: var(--sm-muted);
  }
  .toolbar {
    display: flex;
    flex-wrap: wrap;
    gap: 6px;
  }
  .toolbar button,
  .small {
    padding: 3px 10px;
    font-size: 0.875rem;
  }
  section {
    margin-top: 20px;
  }
  h3 {
    margin: 0 0 8px;
    font-size: 0.75rem;
    font-weight: 600;
    letter-spacing: 0.05em;
    text-transform: uppercase;
    color: var(--sm-muted);
  }
  .content {
    margin: 0;
    padding: 10px 12px;
    border-radius: var(--sm-radius);
    background: var(--sm-surface-2);
    /* No scroller of its own: the pane scrolls, and a keyboard reaches all of a long entry. */
    white-space: pre-wrap;
    overflow-wrap: anywhere;
  }
  .content.text {
    font-family: inherit;
    /* Each line takes the direction of its own words (dir="auto" sets the whole text's). */
    unicode-bidi: plaintext;
  }
  dl.meta {
    display: grid;
    grid-template-columns: max-content 1fr;
    gap: 2px 16px;
    margin: 0;
    font-size: 0.875rem;
  }
  dl.meta dt {
    color: var(--sm-muted);
  }
  dl.meta dd {
    margin: 0;
  }
  ul.plain {
    list-style: none;
    margin: 0;
    padding: 0;
  }
  .chunks li {
    padding: 8px 10px;
    border: 1px solid var(--sm-border);
    border-radius: var(--sm-radius);
  }
  .chunks li + li {
    margin-top: 6px;
  }
  .chunk-head {
    display: flex;
    align-items: center;
    gap: 8px;
    font-size: 0.8rem;
    color: var(--sm-muted);
  }
  .chunk-head .link {
    margin-left: auto;
    font-size: 0.8rem;
  }
  .role {
    padding: 0 6px;
    border-radius: 999px;
    background: var(--sm-surface-2);
    color: var(--sm-text);
    font-weight: 600;
  }
  .chunk-text {
    margin: 4px 0 0;
    white-space: pre-wrap;
    overflow-wrap: anywhere;
  }
  .children li + li,
  .history li + li {
    border-top: 1px solid var(--sm-surface-2);
  }
  .row {
    display: flex;
    width: 100%;
    align-items: baseline;
    gap: 8px;
    border: none;
    border-radius: 0;
    background: none;
    padding: 6px 4px;
    text-align: left;
  }
  .row:hover,
  .row[aria-pressed='true'] {
    background: var(--sm-surface-2);
  }
  .row .name {
    flex-shrink: 0;
    max-width: 60%;
    font-weight: 600;
    overflow-wrap: anywhere;
  }
  .row .aside {
    margin-left: auto;
    flex-shrink: 0;
    font-size: 0.8rem;
    color: var(--sm-muted);
  }
  .preview {
    flex: 1;
    min-width: 0;
    overflow: hidden;
    text-overflow: ellipsis;
    white-space: nowrap;
    font-size: 0.85rem;
    color: var(--sm-muted);
  }
  .version-detail {
    margin: 4px 0 8px;
    padding: 8px;
    border-left: 3px solid var(--sm-accent);
    background: var(--sm-bg);
  }
  .version-detail .bar {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: 8px;
    margin-bottom: 6px;
    font-size: 0.85rem;
  }
  .version-detail .bar button {
    margin-left: auto;
  }
  .diff {
    margin: 0;
    max-height: 40vh;
    overflow: auto;
    background: var(--sm-surface);
    border: 1px solid var(--sm-border);
    border-radius: var(--sm-radius);
    font-size: 0.8rem;
  }
  .diff span {
    display: block;
    padding: 0 8px;
    white-space: pre-wrap;
    overflow-wrap: anywhere;
  }
  .diff .add {
    background: #e7f5ec;
    color: #14532d;
  }
  .diff .del {
    background: #fcecea;
    color: #8c1d18;
  }
  .panel {
    margin: 0 0 12px;
    padding: 12px;
    border: 1px solid var(--sm-border);
    border-radius: var(--sm-radius);
    background: var(--sm-bg);
  }
  .panel p {
    margin: 0 0 8px;
  }
  .panel label {
    display: block;
    margin-bottom: 4px;
    font-weight: 600;
    font-size: 0.875rem;
  }
  .panel input[type='text'],
  .panel textarea {
    width: 100%;
  }
  .panel textarea {
    font-family: var(--sm-mono);
    font-size: 0.85rem;
    resize: vertical;
  }
  /* The label and the format on one line: room for the content box. */
  .edit-head {
    display: flex;
    flex-wrap: wrap;
    align-items: baseline;
    justify-content: space-between;
    gap: 4px 16px;
    margin-bottom: 4px;
  }
  .edit-head label[for] {
    margin: 0;
  }
  fieldset {
    display: flex;
    gap: 12px;
    margin: 0;
    padding: 0;
    border: none;
    font-size: 0.875rem;
  }
  fieldset legend {
    float: left;
    margin-right: 4px;
    padding: 0;
    color: var(--sm-muted);
  }
  fieldset label {
    display: inline-flex;
    gap: 4px;
    align-items: center;
    margin: 0;
    font-weight: 400;
  }
  .actions {
    display: flex;
    flex-wrap: wrap;
    gap: 8px;
    margin-top: 10px;
  }
  /* Save and Cancel stay at the foot of the pane while a long content scrolls above them. */
  form.edit .actions {
    position: sticky;
    /* Sticky insets count from inside the pane's padding (16px): 8px from the pane's foot. */
    bottom: -8px;
    z-index: 1;
    margin: 10px -12px -12px;
    padding: 10px 12px 12px;
    border-radius: 0 0 var(--sm-radius) var(--sm-radius);
    background: var(--sm-bg);
  }
  .panel textarea {
    max-height: 60vh;
  }
  .warn {
    color: var(--sm-warn);
    font-size: 0.85rem;
  }
  [role='alert'] {
    margin: 8px 0 0;
    color: var(--sm-danger);
    font-size: 0.875rem;
  }
  .status {
    margin: 0 0 12px;
    padding: 6px 10px;
    border-radius: var(--sm-radius);
    background: #e7f5ec;
    color: var(--sm-ok);
    font-size: 0.875rem;
  }
  .status:empty {
    display: none;
  }
  .empty {
    color: var(--sm-muted);
    font-size: 0.9rem;
  }
  .kept {
    margin: -2px 0 8px;
    color: var(--sm-muted);
    font-size: 0.85rem;
  }
  .link.inline {
    padding: 0;
    font: inherit;
    overflow-wrap: anywhere;
  }
`;
