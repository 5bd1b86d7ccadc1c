// <sm-memory-map>'s own styles; the element puts only the shared tokens (styles.ts) first
// (sm-memory-map.ts says why not the base sheet).
import { css } from 'lit';

export const memoryMapStyles = css`
  :host {
    box-sizing: border-box;
    display: flex;
    flex-direction: column;
    gap: 6px;
    min-height: 120px;
  }
  .frame {
    position: relative;
    flex: 1 1 auto;
    min-height: 64px;
    border-radius: var(--sm-radius);
    overflow: hidden;
    background: var(--sm-surface);
  }
  .frame:focus {
    outline: none;
  }
  .frame:focus-visible {
    outline: 2px solid var(--sm-accent);
    outline-offset: 1px;
  }
  /* The block the arrow keys are on: only while the map has the keyboard. */
  .frame:not(:focus-visible) .active {
    display: none;
  }
  .active {
    fill: none;
    pointer-events: none;
    stroke: var(--sm-text);
    stroke-width: 2;
    stroke-dasharray: 5 3;
  }
  .active-halo {
    fill: none;
    pointer-events: none;
    stroke: #ffffff;
    stroke-width: 4;
  }
  .hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip-path: inset(50%);
    white-space: nowrap;
  }
  .frame > svg {
    position: absolute;
    inset: 0;
    width: 100%;
    height: 100%;
    display: block;
    font-family: var(--sm-font);
  }
  svg.map {
    cursor: pointer;
  }
  path.heading {
    stroke: #c9d0da;
    stroke-width: 0.5;
  }
  path.entry,
  path.group {
    /* Separates neighbours that touch (small headings have no gaps). */
    stroke: rgb(255 255 255 / 0.55);
    stroke-width: 0.5;
  }
  .hover {
    fill: transparent;
    stroke: var(--sm-text);
    stroke-width: 1;
  }
  text {
    pointer-events: none;
    font-size: 12px;
    fill: var(--sm-text);
  }
  text.heading {
    font-weight: 600;
  }
  text.light {
    fill: #ffffff;
  }
  text.note {
    fill: var(--sm-muted);
    font-weight: 400;
  }
  .outline {
    fill: none;
    pointer-events: none;
    stroke: var(--sm-accent);
    stroke-width: 2.5;
  }
  .halo {
    fill: none;
    pointer-events: none;
    stroke: #ffffff;
    stroke-width: 5;
  }
  .caption {
    /* Its line whatever room the map leaves (a short window squeezed it to nothing). */
    flex: none;
    margin: 0;
    font-size: 0.8125rem;
    white-space: nowrap;
    overflow: hidden;
    text-overflow: ellipsis;
    line-height: 1.4;
  }
  .caption b {
    font-weight: 600;
  }
  .muted {
    color: var(--sm-muted);
  }
  .legend {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: 4px 14px;
    font-size: 0.75rem;
    color: var(--sm-muted);
  }
  .scale {
    display: inline-flex;
    align-items: center;
    gap: 6px;
  }
  .swatches {
    border-radius: 2px;
  }
  .empty {
    display: grid;
    place-items: center;
    height: 100%;
    margin: 0;
    color: var(--sm-muted);
  }
`;
