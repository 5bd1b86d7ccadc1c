// A memory tool call as a card: which tool, on which path (a link into the memory tree), how it
// went in one line, and the full arguments and result on demand.
import { LitElement, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { emit, type SelectPathDetail } from './events';
import { base, card, tokens } from './styles';
import { toolCardStyles } from './sm-tool-card.styles';

type Outcome = 'pending' | 'ok' | 'missing' | 'error';

interface Summary {
  outcome: Outcome;
  text: string;
}

/** The result object as the engine returns it, read defensively (it crossed a model and a worker). */
type Fields = Record<string, unknown>;

const asFields = (value: unknown): Fields =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Fields) : {};

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * A card's link asks to follow moves: the entry it names may have been moved since the call, and
 * the link should lead to where it is now (the explorer resolves it; see `sm-explorer`).
 */
export interface FollowPathDetail extends SelectPathDetail {
  followMoves: true;
}

/**
 * `<sm-tool-card>`: one tool call of the model, with its result once it is in.
 *
 * @fires sm-select-path - The path link was clicked (`{ path, followMoves: true }`: where the
 *   entry is now, if it was moved since).
 */
@customElement('sm-tool-card')
export class SmToolCard extends LitElement {
  static override styles = [tokens, base, card, toolCardStyles];

  /** Tool name, e.g. `saveMemory`. */
  @property() name = '';

  /** The arguments the model passed (parsed JSON, or the raw string when they were not JSON). */
  @property({ attribute: false }) args: unknown;

  /** The tool's result object; `undefined` while the call is still running. */
  @property({ attribute: false }) result: unknown;

  /** The call was refused before it ran (unknown tool, bad JSON, arguments not matching the schema). */
  @property({ type: Boolean }) refused = false;

  /** Open the arguments and result from the start. */
  @property({ type: Boolean }) open = false;

  override render() {
    const summary = this.summarise();
    const path = this.linkedPath();
    const from = this.name === 'moveMemory' ? this.stringArg('from') : undefined;
    return html`<div
      class="card is-${summary.outcome}"
      role="group"
      aria-label="Tool call ${this.name}"
    >
      <div class="head">
        <span class="name">${this.name}</span>
        ${
          from !== undefined && path !== undefined
            ? html`<span class="path-text">${from}</span
                ><span class="arrow" aria-hidden="true">→</span>`
            : nothing
        }
        ${
          path !== undefined
            ? html`<button
                class="path"
                type="button"
                title="Show in the memory tree"
                @click=${() => this.handleSelect(path)}
              >
                ${path === '' ? 'Memory root' : path}
              </button>`
            : nothing
        }
      </div>
      <details ?open=${this.open}>
        <summary><span class="outcome">${summary.text}</span></summary>
        <h4>Arguments</h4>
        <pre>${pretty(this.args)}</pre>
        ${
          this.result === undefined
            ? nothing
            : html`<h4>Result</h4>
                <pre>${pretty(this.result)}</pre>`
        }
      </details>
    </div>`;
  }

  private handleSelect(path: string): void {
    const detail: FollowPathDetail = { path, followMoves: true };
    emit(this, 'sm-select-path', detail);
  }

  private stringArg(key: string): string | undefined {
    const value = asFields(this.args)[key];
    return typeof value === 'string' ? value : undefined;
  }

  /** The memory path this call is about: from the result when it names one, else from the arguments. */
  private linkedPath(): string | undefined {
    const r = asFields(this.result);
    if (this.name === 'moveMemory') {
      return typeof r.to === 'string' && r.status === 'SUCCESS' ? r.to : this.stringArg('to');
    }
    if (r.status === 'SUCCESS' && typeof r.path === 'string') return r.path;
    if (this.name === 'listMemory') return this.stringArg('rootPath') ?? '';
    return this.stringArg('path');
  }

  /** One line on how the call went. */
  private summarise(): Summary {
    if (this.result === undefined) return { outcome: 'pending', text: 'Running…' };
    const r = asFields(this.result);
    if (r.status === 'ERROR') {
      const message = typeof r.message === 'string' ? r.message : '';
      const lead = this.refused ? 'Refused' : 'Error';
      return { outcome: 'error', text: message ? `${lead}: ${message}` : lead };
    }
    if (r.status === 'NOT_FOUND') {
      const text =
        r.isHeading && typeof r.children === 'number'
          ? `Not an entry: a heading with ${plural(r.children, 'child', 'children')}`
          : 'Not found';
      return { outcome: 'missing', text };
    }
    if (r.status !== 'SUCCESS') {
      return { outcome: 'ok', text: typeof r.status === 'string' ? r.status : 'Done' };
    }
    const num = (key: string, from: Fields = r) => (typeof from[key] === 'number' ? from[key] : 0);
    switch (this.name) {
      case 'saveMemory':
        // The entry held this already: nothing was written (docs/design.md, saveMemory).
        if (r.unchanged === true)
          return {
            outcome: 'ok',
            text: `Already saved, version ${num('version')}: nothing changed`,
          };
        return {
          outcome: 'ok',
          // The chat sentences kept with the entry as its context (its detail quotes them).
          text: `Saved, version ${num('version')}${num('chunksStored') ? ` · ${plural(num('chunksStored'), 'chat sentence')} quoted` : ''}`,
        };
      case 'updateMemory':
        if (r.unchanged === true)
          return { outcome: 'ok', text: `Already so, version ${num('version')}: nothing changed` };
        return { outcome: 'ok', text: `Updated, version ${num('version')}` };
      case 'queryMemory': {
        const chunks = Array.isArray(r.contextChunks) ? r.contextChunks.length : 0;
        const version = num('version', asFields(r.metadata));
        return {
          outcome: 'ok',
          text: `Read version ${version} · ${plural(chunks, 'context chunk')}`,
        };
      }
      case 'queryMemoryHeading': {
        const shown = Array.isArray(r.children) ? r.children.length : 0;
        const total = num('totalChildren');
        const query = typeof r.query === 'string' && r.query ? ` for “${r.query}”` : '';
        const count =
          shown < total
            ? `${shown} of ${plural(total, 'child', 'children')}`
            : plural(total, 'child', 'children');
        return { outcome: 'ok', text: `${count}${query}` };
      }
      case 'listMemory':
        return {
          outcome: 'ok',
          text: `${plural(num('totalEntries'), 'entry', 'entries')}${r.truncated ? ' (shortened)' : ''}`,
        };
      case 'deleteMemory':
        return { outcome: 'ok', text: `Deleted ${plural(num('deleted'), 'entry', 'entries')}` };
      case 'moveMemory':
        return { outcome: 'ok', text: `Moved ${plural(num('moved'), 'entry', 'entries')}` };
      default:
        return { outcome: 'ok', text: 'Done' };
    }
  }
}

/** JSON for people: indented, strings as they are. */
function pretty(value: unknown): string {
  if (value === undefined) return '(none)';
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-tool-card': SmToolCard;
  }
}
