// "Remember this" in the chat panel (docs/chat.md): a reactive controller that opens the remember
// form under a message, asks the engine where the words belong (suggestMemoryPath), saves them
// with that message's context snapshot (saveMemory with its conversation and turn id), and puts
// the focus back where it was when the form closes.
import { deepActiveElement } from './focus';
import { html, nothing, type ReactiveController, type ReactiveControllerHost } from 'lit';
import { keyed } from 'lit/directives/keyed.js';
import type { MemoryClient } from '../worker-client';
import type { MessageRememberDetail, SmMessage } from './sm-message';
import type { RememberSaveDetail, RememberSuggestion } from './sm-remember-form';
import './sm-remember-form';

/** What the controller reads from its host when it acts. */
export interface RememberSource {
  memory?: MemoryClient;
  /** The conversation shown: the message's. */
  conversationId?: number;
  /** The context snapshot's budget (the settings' default). */
  contextTokens: number;
}

/** The form open under one message. */
interface Remembering {
  /** Tells one opening from the next (a fresh form each time). */
  key: number;
  messageId: number;
  conversationId: number;
  kind: 'user' | 'assistant';
  text: string;
  selected: boolean;
  suggestion?: RememberSuggestion;
  suggestError: string;
  saving: boolean;
  error: string;
  saved: string;
  /** What had focus when the form opened. */
  opener: HTMLElement | null;
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class RememberController implements ReactiveController {
  private current?: Remembering;
  private opened = 0;

  constructor(
    private readonly host: ReactiveControllerHost & HTMLElement,
    private readonly source: () => RememberSource,
  ) {
    host.addController(this);
  }

  hostConnected(): void {}

  /** A message's Remember this: the form opens under it, and the engine is asked for a path. */
  readonly open = (event: CustomEvent<MessageRememberDetail>): void => {
    const { id, text, selected } = event.detail;
    const { memory, conversationId } = this.source();
    if (!memory || conversationId === undefined) return;
    const from = event.target as Partial<SmMessage> | null;
    const remembering: Remembering = {
      key: ++this.opened,
      messageId: id,
      conversationId,
      kind: from?.kind === 'user' ? 'user' : 'assistant',
      text,
      selected,
      suggestError: '',
      saving: false,
      error: '',
      saved: '',
      opener: deepActiveElement() ?? null,
    };
    this.current = remembering;
    this.host.requestUpdate();
    void this.suggest(memory, remembering);
  };

  /** The form under message `messageId`, when it is the one open. */
  formFor(messageId: number | undefined) {
    const r = this.current;
    if (!r || messageId === undefined || r.messageId !== messageId) return nothing;
    return keyed(
      r.key,
      html`<sm-remember-form
        kind=${r.kind}
        .text=${r.text}
        .selected=${r.selected}
        .suggestion=${r.suggestion}
        .suggestError=${r.suggestError}
        .saving=${r.saving}
        .error=${r.error}
        .saved=${r.saved}
        @sm-remember-save=${this.save}
        @sm-remember-close=${this.close}
      ></sm-remember-form>`,
    );
  }

  private async suggest(memory: MemoryClient, r: Remembering): Promise<void> {
    let failure = '';
    try {
      const s = await memory.suggestMemoryPath(r.text);
      if (s.status === 'SUCCESS')
        r.suggestion = { path: s.path, heading: s.heading, basis: s.basis };
      else failure = s.message;
    } catch (e) {
      failure = errorMessage(e);
    }
    if (failure) {
      r.suggestError = `No place could be proposed (${failure}). Write a path, like Notes/Budget.`;
    }
    if (this.current === r) this.host.requestUpdate();
  }

  private readonly save = async (event: CustomEvent<RememberSaveDetail>): Promise<void> => {
    const r = this.current;
    const { memory, contextTokens } = this.source();
    if (!r || r.saving || !memory) return;
    const { text, path } = event.detail;
    r.saving = true;
    r.error = '';
    this.host.requestUpdate();
    try {
      const saved = await memory.saveMemory(path, text, contextTokens, {
        conversationId: r.conversationId,
        turnId: r.messageId,
      });
      if (saved.status === 'SUCCESS') r.saved = saved.path;
      else r.error = saved.message;
    } catch (e) {
      r.error = `The memory could not be saved: ${errorMessage(e)}`;
    }
    r.saving = false;
    if (this.current === r) this.host.requestUpdate();
  };

  /** Closes the form; the focus goes back to what had it, else to the message's Remember this. */
  readonly close = async (): Promise<void> => {
    const r = this.current;
    if (!r) return;
    this.current = undefined;
    this.host.requestUpdate();
    await this.host.updateComplete;
    const { opener } = r;
    if (opener?.isConnected) {
      opener.focus();
      if (deepActiveElement() === opener) return;
    }
    const root = this.host.shadowRoot ?? this.host;
    root.querySelector<SmMessage>(`#msg-${r.messageId}`)?.focusRemember();
  };
}
