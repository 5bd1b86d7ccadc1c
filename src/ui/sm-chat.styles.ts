// <sm-chat>'s own styles; the element puts the shared tokens and base sheet (styles.ts) first.
import { css } from 'lit';

export const chatStyles = css`
  :host {
    display: flex;
    flex-direction: column;
    min-height: 0;
    min-width: 0;
    height: 100%;
    background: var(--sm-bg);
  }
  .status {
    display: flex;
    align-items: center;
    gap: 8px;
    padding: 6px 14px;
    min-height: 32px;
    border-bottom: 1px solid var(--sm-border);
    background: var(--sm-surface);
    font-size: 0.8rem;
    color: var(--sm-muted);
  }
  .status .text {
    min-width: 0;
    overflow-wrap: anywhere;
  }
  .status progress {
    flex: 0 1 120px;
    min-width: 48px;
  }
  .status button {
    flex: none;
    margin-left: auto;
  }
  .status strong {
    color: var(--sm-text);
    font-weight: 600;
  }
  .dot {
    flex: none;
    width: 8px;
    height: 8px;
    border-radius: 50%;
    background: var(--sm-muted);
  }
  .status.connected .dot {
    background: var(--sm-ok);
  }
  .status.connecting .dot {
    background: #d19a00;
    animation: pulse 1.2s ease-in-out infinite;
  }
  .status.error {
    color: var(--sm-danger);
  }
  .status.error .dot {
    background: var(--sm-danger);
  }
  .sep {
    margin: 0 2px;
    opacity: 0.6;
  }
  @keyframes pulse {
    50% {
      opacity: 0.3;
    }
  }
  .log {
    flex: 1;
    min-height: 0;
    overflow-y: auto;
    overscroll-behavior: contain;
  }
  .messages {
    display: flex;
    flex-direction: column;
    gap: 12px;
    max-width: 54rem;
    margin: 0 auto;
    padding: 16px 16px 20px;
  }
  .placeholder {
    margin: auto;
    padding: 32px 16px;
    max-width: 28rem;
    text-align: center;
    color: var(--sm-muted);
  }
  .placeholder h2 {
    margin: 0 0 6px;
    font-size: 1rem;
    color: var(--sm-text);
  }
  .placeholder p {
    margin: 0 0 12px;
  }
  .thinking {
    display: flex;
    align-items: center;
    gap: 8px;
    font-size: 0.85rem;
    color: var(--sm-muted);
  }
  .thinking .dots {
    display: inline-flex;
    gap: 3px;
  }
  .thinking .dots span {
    width: 5px;
    height: 5px;
    border-radius: 50%;
    background: var(--sm-muted);
    animation: pulse 1.2s ease-in-out infinite;
  }
  .thinking .dots span:nth-child(2) {
    animation-delay: 0.2s;
  }
  .thinking .dots span:nth-child(3) {
    animation-delay: 0.4s;
  }
  .bottom {
    border-top: 1px solid var(--sm-border);
    background: var(--sm-surface);
  }
  .bottom-inner {
    max-width: 54rem;
    margin: 0 auto;
    padding: 10px 16px 12px;
    display: flex;
    flex-direction: column;
    gap: 8px;
  }
  .alert {
    display: flex;
    align-items: flex-start;
    gap: 10px;
    padding: 8px 10px;
    border: 1px solid var(--sm-danger);
    border-left-width: 4px;
    border-radius: var(--sm-radius);
    background: #fdf1f0;
    color: var(--sm-text);
    font-size: 0.875rem;
  }
  .alert p {
    flex: 1;
    margin: 0;
    overflow-wrap: anywhere;
  }
  .alert strong {
    color: var(--sm-danger);
  }
  .alert button {
    flex: none;
    padding: 2px 8px;
    font-size: 0.8rem;
  }
  .opening {
    margin: 0;
    color: var(--sm-muted);
    font-size: 0.875rem;
  }
  form {
    display: flex;
    align-items: flex-end;
    gap: 8px;
  }
  .visually-hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip-path: inset(50%);
    white-space: nowrap;
  }
  textarea {
    flex: 1;
    min-width: 0;
    min-height: 40px;
    max-height: 12rem;
    field-sizing: content;
    resize: none;
    line-height: 1.4;
    padding: 9px 10px;
  }
  .buttons {
    display: flex;
    gap: 6px;
  }
  .buttons button {
    height: 40px;
    padding: 0 14px;
  }
  .hint {
    margin: -2px 0 0;
    font-size: 0.75rem;
    color: var(--sm-muted);
  }
  @media (max-width: 480px) {
    .messages {
      padding: 12px 10px 16px;
    }
    .bottom-inner {
      padding: 8px 10px 10px;
    }
    .hint {
      display: none;
    }
    .buttons button {
      padding: 0 10px;
    }
  }
  @media (prefers-reduced-motion: reduce) {
    .status.connecting .dot,
    .thinking .dots span {
      animation: none;
    }
  }
`;
