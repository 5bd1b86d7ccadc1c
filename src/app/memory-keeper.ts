// The memory keeper in the app (docs/chat.md, "Memory keeper"): it hears every turn through the
// chat session it wraps, notes the exchanges in which the model saved nothing, and once the
// person is idle runs `runKeeper` on them (one run at a time), stores the card of what it kept
// and leaves one line in the status when an answer was not used. Any new turn, a switch of chat
// or turning the setting off aborts a run at once, without waiting for it; its exchanges stay for
// the next run. The decisions are keeper-schedule.ts; this module holds the clock, the timer and
// the abort.
import {
  KEEPER_IDLE_MS,
  isPassingFailure,
  runKeeper,
  type KeeperMemory,
  type KeeperOutcome,
  type KeeperRequest,
  type SchemaModeMemory,
} from '../chat/keeper';
import { keeperCardMessage } from '../chat/keeper-card';
import type { ChatSession, TurnResult } from '../chat/types';
import type { Connector } from '../llm/connector';
import type { ServerInfo } from '../llm/types';
import type { MemoryApi } from '../memory/types';
import {
  NEW_LEDGER,
  afterRun,
  afterTurn,
  batchExchanges,
  decodeHandover,
  dueConversation,
  encodeHandover,
  keeperStatusLine,
  mergeLedgers,
  nextDue,
  runBatch,
  type KeeperLedger,
  type UnkeptExchange,
} from './keeper-schedule';

/** The server a run asks: the current settings' connector and the session's detection. */
export interface KeeperTarget {
  connector: Pick<Connector, 'structured'>;
  server(signal?: AbortSignal): Promise<ServerInfo>;
  /** Snapshot budget of each save (the settings' default context tokens). */
  contextTokens: number;
}

/**
 * Where a page leaves the exchanges its keeper did not get to, for the next page (or another open
 * tab) to take over: a person who says something and closes the tab within the idle time still
 * has it kept.
 */
export interface KeeperHandover {
  /** What was left so far, read at once (a page that goes cannot wait). */
  peek(): string | null;
  /** Leaves `text` (what `peek` read, merged with this page's). */
  leave(text: string): void;
  /** Takes what was left: read and removed as one step, so two pages never both take it. */
  take(): Promise<string | null>;
}

export interface MemoryKeeperOptions {
  memory: KeeperMemory & Pick<MemoryApi, 'getMessages' | 'addMessage'>;
  /** The server of the current settings; undefined while there is none. */
  target(): KeeperTarget | undefined;
  /** The setting: off, nothing is noted, sent or written. */
  enabled(): boolean;
  /** The conversation open in the chat (its exchanges are kept first). */
  openConversation(): number | undefined;
  /** Where servers that refuse the schema are remembered. */
  schemaModes: SchemaModeMemory;
  /** The conversation a run reads now; undefined once it ends. */
  onRunning(conversationId: number | undefined): void;
  /** The one line a refused or failed run leaves in the status. */
  onStatusLine(message: string): void;
  /** Where unkept exchanges wait when the page goes (none: they go with it). */
  handover?: KeeperHandover;
  /** The run itself (tests hand in a fake). */
  run?: (request: KeeperRequest) => Promise<KeeperOutcome>;
  /** The clock (default `Date.now`, read at each call so that fake clocks apply). */
  now?: () => number;
}

export class MemoryKeeper {
  private readonly ledgers = new Map<number, KeeperLedger>();
  private lastActivity: number;
  /** Turns running now: while any does, the person is not idle. */
  private turns = 0;
  /** The composer holds words. */
  private drafting = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: { conversationId: number; controller: AbortController } | undefined;

  constructor(private readonly options: MemoryKeeperOptions) {
    this.lastActivity = this.now();
  }

  /** The same session, with each turn reported here: its start aborts a run, its end is noted. */
  wrap(session: ChatSession): ChatSession {
    const turn = (conversationId: number, start: () => Promise<TurnResult>) => {
      this.turnStarted();
      const done = start();
      done.then(
        (result) => this.turnEnded(conversationId, result),
        () => this.turnEnded(conversationId, undefined),
      );
      return done;
    };
    return {
      server: (signal) => session.server(signal),
      toolMode: () => session.toolMode(),
      send: (c, text, signal, onEvent) => turn(c, () => session.send(c, text, signal, onEvent)),
      regenerate: (c, signal, onEvent) => turn(c, () => session.regenerate(c, signal, onEvent)),
      resend: (c, id, text, signal, onEvent) =>
        turn(c, () => session.resend(c, id, text, signal, onEvent)),
      continueReply: (c, id, signal, onEvent) =>
        turn(c, () => session.continueReply(c, id, signal, onEvent)),
    };
  }

  /** A turn starts: a run stops at once (not awaited), and nothing runs until the turn ends. */
  turnStarted(): void {
    this.turns++;
    this.abort();
    this.touch();
  }

  /** A turn ended: its exchange is noted, and the idle clock starts again. */
  turnEnded(conversationId: number, result: TurnResult | undefined): void {
    this.turns = Math.max(0, this.turns - 1);
    this.touch();
    if (this.options.enabled()) {
      this.ledgers.set(conversationId, afterTurn(this.ledger(conversationId), result));
    }
    this.schedule();
  }

  /** Typing in the composer: the idle clock starts again; no run starts while words wait there. */
  typing(drafting: boolean): void {
    this.drafting = drafting;
    this.touch();
    this.schedule();
  }

  /** Another chat is opened: a run stops (its exchanges wait for the next one). */
  conversationOpened(): void {
    this.abort();
    this.touch();
    this.schedule();
  }

  /** The settings were saved: turned off, a run stops and nothing noted is kept. */
  settingsChanged(): void {
    if (this.options.enabled()) return this.schedule();
    this.abort();
    this.ledgers.clear();
    this.clearTimer();
  }

  /**
   * The page goes: its unkept exchanges are left for the next page (merged with what others
   * left). A run under way is stopped with the page; its exchanges are among them.
   */
  handOver(): void {
    const handover = this.options.handover;
    if (!handover || !this.options.enabled()) return;
    this.abort();
    this.clearTimer();
    const text = encodeHandover(this.ledgers, handover.peek());
    if (text !== undefined) handover.leave(text);
    // They are the next page's now. A page back from the back/forward cache takes back (`claim`)
    // only what no other page took: keeping its own copy, it would keep them a second time.
    this.ledgers.clear();
  }

  /**
   * Takes over what pages that went left (call once the settings are read, and when another
   * page leaves some): kept once the person is idle here.
   */
  async claim(): Promise<void> {
    const handover = this.options.handover;
    if (!handover || !this.options.enabled()) return;
    const taken = decodeHandover(await handover.take());
    if (!taken.size) return;
    for (const [id, ledger] of taken) {
      const mine = this.ledgers.get(id);
      this.ledgers.set(id, mine ? mergeLedgers(ledger, mine) : ledger);
    }
    this.touch();
    this.schedule();
  }

  /** Stops the timer and any run (the page goes). */
  dispose(): void {
    this.abort();
    this.clearTimer();
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private ledger(conversationId: number): KeeperLedger {
    return this.ledgers.get(conversationId) ?? NEW_LEDGER;
  }

  private touch(): void {
    this.lastActivity = this.now();
  }

  private abort(): void {
    this.running?.controller.abort();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Sets the timer for the next time a ledger is due (never while a turn, words or a run wait). */
  private schedule(minDelay = 0): void {
    this.clearTimer();
    if (!this.options.enabled() || this.running || this.turns > 0 || this.drafting) return;
    const at = nextDue(this.ledgers, this.lastActivity);
    if (at === undefined) return;
    this.timer = setTimeout(() => this.check(), Math.max(minDelay, at - this.now()));
  }

  private check(): void {
    this.timer = undefined;
    if (!this.options.enabled() || this.running) return;
    const idleMs = this.turns > 0 || this.drafting ? 0 : this.now() - this.lastActivity;
    const due = dueConversation(this.ledgers, this.options.openConversation(), idleMs);
    // Not due after all (a clock that moved back): look again later, never in a tight loop.
    if (due === undefined) return this.schedule(KEEPER_IDLE_MS);
    void this.runFor(due);
  }

  /** One run; a top-level handler: it catches. */
  private async runFor(conversationId: number): Promise<void> {
    const batch = runBatch(this.ledger(conversationId));
    const controller = new AbortController();
    this.running = { conversationId, controller };
    this.options.onRunning(conversationId);
    let result: Pick<KeeperOutcome, 'status' | 'retry'>;
    try {
      result = await this.keep(conversationId, batch, controller.signal);
    } catch (e) {
      result = controller.signal.aborted
        ? { status: 'aborted' }
        : { status: 'error', retry: isPassingFailure(e) };
      if (result.status === 'error') {
        this.options.onStatusLine(
          keeperStatusLine({
            status: 'error',
            message: e instanceof Error ? e.message : String(e),
            retry: result.retry,
          })!,
        );
      }
    }
    const { status } = result;
    this.running = undefined;
    // Stopped by the person before anything was written: the same exchanges next time. A run
    // that wrote counts as done even if stopped meanwhile (asking again would save them twice).
    // Stopped otherwise (the server's own abort): looked at, or the next check would ask again.
    // A server busy or down: the same exchanges next time too, after the wait any run has.
    const stopped = controller.signal.aborted;
    if (this.options.enabled()) {
      const counted =
        status === 'error' && result.retry
          ? 'aborted'
          : status !== 'aborted'
            ? status
            : stopped
              ? 'aborted'
              : 'nothing';
      this.ledgers.set(conversationId, afterRun(this.ledger(conversationId), batch, counted));
    }
    this.options.onRunning(undefined);
    this.schedule();
  }

  private async keep(
    conversationId: number,
    batch: readonly UnkeptExchange[],
    signal: AbortSignal,
  ): Promise<Pick<KeeperOutcome, 'status' | 'retry'>> {
    const { memory } = this.options;
    const target = this.options.target();
    if (!target) return { status: 'error' };
    const server = await target.server(signal);
    if (signal.aborted) return { status: 'aborted' };
    const { exchanges, replyId } = batchExchanges(await memory.getMessages(conversationId), batch);
    if (!exchanges.length || replyId === undefined) return { status: 'nothing' };
    const outcome = await (this.options.run ?? runKeeper)({
      memory,
      connector: target.connector,
      server,
      exchanges,
      conversationId,
      signal,
      schemaModes: this.options.schemaModes,
      contextTokens: target.contextTokens,
      // Writing: done, whatever happens next (a page that goes meanwhile does not hand them over).
      onWriting: () =>
        this.ledgers.set(conversationId, afterRun(this.ledger(conversationId), batch, 'kept')),
    });
    if (outcome.status === 'kept' && outcome.ops.length) {
      const stored = await memory.addMessage(
        keeperCardMessage(conversationId, outcome.ops, replyId),
      );
      if (stored.status !== 'SUCCESS') {
        const paths = outcome.ops.map((o) => o.path).join(', ');
        this.options.onStatusLine(
          `The memory keeper saved ${paths}, but its card could not be stored (${stored.message}): the memory explorer shows what was saved.`,
        );
      }
    }
    const line = keeperStatusLine(outcome);
    if (line) this.options.onStatusLine(line);
    return outcome;
  }
}
