// A round of tool calls: each call checked against its schema and run in the engine, in order (a
// call that could not be read, or one past MAX_CALLS_PER_ROUND, is answered with why, and nothing
// runs), the UI told of each, then the round stored. A stop while a call runs keeps the calls that
// finished.
import type { ToolCall } from '../llm/types';
import type { ToolCallRecord } from '../memory/types';
import type { Reply } from './generate';
import {
  changedMemory,
  keptArguments,
  runToolCall,
  type ToolDefaults,
  type ToolOutcome,
} from './tools';
import { isStop, storeAll, type Turn } from './turn';

/**
 * Calls of one reply that run; the rest are answered with why, and the model can make them in
 * its next reply (docs/decisions/0015).
 */
export const MAX_CALLS_PER_ROUND = 16;

/** What a call of this turn takes by default: the settings', and the turn's own place. */
function defaultsOf(turn: Turn): ToolDefaults {
  const { settings } = turn.ctx;
  return {
    contextTokens: settings.contextTokens,
    recencyBias: settings.recencyBias,
    conversationId: turn.conversationId,
    ...(turn.userId !== undefined
      ? { exclude: { conversationId: turn.conversationId, fromTurnId: turn.userId } }
      : {}),
  };
}

/** Runs the reply's calls and stores the round; `stopped` when the turn was stopped meanwhile. */
export async function toolRound(
  turn: Turn,
  reply: Reply,
  mode: 'native' | 'prompted',
  round: number,
): Promise<'stored' | 'stopped'> {
  const { memory, tools, validators } = turn.ctx;
  const { calls, visible, unreadable } = reply;
  const outcomes: ToolOutcome[] = [];
  try {
    for (const [i, call] of calls.entries()) {
      turn.emit({
        type: 'tool-call',
        round,
        id: call.id,
        name: call.function.name,
        args: shownArguments(call.function.arguments),
      });
      const why = unreadable.get(call.id);
      const outcome =
        i >= MAX_CALLS_PER_ROUND
          ? notRunOutcome(call, calls.length)
          : why !== undefined
            ? unreadableOutcome(call, why, mode)
            : await turn.step(runToolCall(call, tools, memory, defaultsOf(turn), validators));
      outcomes.push(outcome);
      if (changedMemory(outcome)) turn.wrote = true;
      turn.emit({
        type: 'tool-result',
        round,
        id: call.id,
        name: outcome.name,
        result: outcome.result,
        refused: outcome.refused,
      });
    }
  } catch (e) {
    if (!isStop(turn, e)) throw e;
    // Stopped while a tool ran: keep the round with the calls that finished (a call still
    // running finishes in the engine, unrecorded here).
    turn.keptPartial = true;
    if (visible.trim() || outcomes.length) {
      await storeRound(turn, visible, calls.slice(0, outcomes.length), outcomes, {
        mode,
        aborted: true,
      });
    }
    return 'stopped';
  }
  await storeRound(turn, visible, calls, outcomes, { mode });
  return 'stored';
}

/**
 * The assistant message with its calls and one message per result, in one write, so a result is
 * never stored without the call it answers.
 */
async function storeRound(
  turn: Turn,
  visible: string,
  calls: readonly ToolCall[],
  outcomes: readonly ToolOutcome[],
  meta: Record<string, unknown>,
): Promise<void> {
  const records: ToolCallRecord[] = calls.map((c, i) => ({
    id: c.id,
    name: c.function.name,
    arguments: outcomes[i].args,
    result: outcomes[i].result,
  }));
  await storeAll(
    turn,
    [
      { role: 'assistant', text: visible, toolCalls: records, meta },
      ...calls.map((call, i) => ({
        role: 'tool' as const,
        text: JSON.stringify(outcomes[i].result),
        toolCallId: call.id,
        meta: { name: call.function.name },
      })),
    ],
    !!visible.trim(),
  );
}

/** The failed result of a call that could not be read: nothing ran; the model is told why. */
function unreadableOutcome(call: ToolCall, why: string, mode: 'native' | 'prompted'): ToolOutcome {
  const how =
    mode === 'prompted'
      ? 'Write the call again as <tool_call>{"name": "<tool name>", "arguments": {…}}</tool_call> with valid JSON.'
      : 'Call the tool again with valid JSON arguments.';
  return {
    name: call.function.name,
    args: keptArguments(call.function.arguments),
    refused: true,
    result: {
      status: 'ERROR',
      code: 'INVALID_ARGUMENT',
      message: `Your tool call could not be read: ${why}. Nothing was run. ${how}`,
    },
  };
}

/** The failed result of a call past MAX_CALLS_PER_ROUND: not run, and the model told so. */
function notRunOutcome(call: ToolCall, count: number): ToolOutcome {
  return {
    name: call.function.name,
    args: shownArguments(call.function.arguments),
    refused: true,
    result: {
      status: 'ERROR',
      code: 'INVALID_ARGUMENT',
      message: `This reply made ${count} tool calls and at most ${MAX_CALLS_PER_ROUND} run per reply, so this one was not run. Make it again in your next reply if it is still needed.`,
    },
  };
}

/** Arguments as the UI shows them: parsed when they are JSON, else as written (cut when huge). */
function shownArguments(text: string): unknown {
  const kept = keptArguments(text);
  if (kept !== text) return kept;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
