// What a chat turn needs from memory before it asks the model, in one call (docs/design.md, "One
// chat turn"): the stored user message indexed, the conversation, the outline and the
// auto-recall hits. Built from the other tool modules' methods, like the explorer's detail.
import type {
  Message,
  OutlineNode,
  RecallHit,
  RecallOptions,
  RecordTurnResult,
  ToolError,
  TurnContext,
  TurnRequest,
} from '../types';

/** The calls a turn's start is made of, from the other tool modules. */
export interface TurnReads {
  recordTurn(turn: {
    conversationId: number;
    role: 'user';
    text: string;
    turnId: number;
  }): Promise<RecordTurnResult | ToolError>;
  recallMemory(
    query: unknown,
    limit?: unknown,
    options?: RecallOptions,
  ): Promise<RecallHit[] | ToolError>;
  memoryOutline(depth?: number): Promise<OutlineNode[]>;
  getMessages(conversationId: number): Promise<Message[]>;
}

export function turnStartTools(reads: TurnReads) {
  /**
   * Indexes `request.index` (a stored user message) and resolves once its sentences are
   * searchable, so a save the model makes in this turn takes them into its context snapshot;
   * then reads what the prompt is built from. Indexing that fails does not stop the turn (its
   * result says why); a read that throws rejects the call.
   */
  async function prepareTurn(request: TurnRequest): Promise<TurnContext> {
    const { conversationId, index, recall, outlineDepth } = request ?? { conversationId: -1 };
    const indexed = index
      ? await reads.recordTurn({
          conversationId,
          role: 'user',
          text: index.text,
          turnId: index.turnId,
        })
      : undefined;
    // The message just indexed is the query itself: recall never brings it back.
    const options =
      recall && index && !recall.options?.exclude
        ? { ...recall.options, exclude: { conversationId, fromTurnId: index.turnId } }
        : recall?.options;
    // The three reads are independent: asked together, one's storage waits overlap the others'.
    const [hits, outline, messages] = await Promise.all([
      recall ? reads.recallMemory(recall.query, recall.limit, options) : [],
      outlineDepth ? reads.memoryOutline(outlineDepth) : [],
      reads.getMessages(conversationId),
    ]);
    return {
      messages,
      outline,
      recall: Array.isArray(hits) ? hits : [],
      ...(indexed ? { indexed } : {}),
    };
  }

  return { prepareTurn };
}
