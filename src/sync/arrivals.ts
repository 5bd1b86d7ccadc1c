// What the app does with rows that arrived by sync (docs/sync.md, "Vectors"): messages go into the
// semantic index, entries are embedded in the background, like rows of another model.
import type { MemoryApi, ReembedProgress } from '../memory/types';
import type { ArrivedMessage } from './engine';

export async function indexArrivals(
  memory: Pick<MemoryApi, 'recordTurn' | 'reembed'>,
  arrived: { entries: number; messages: ArrivedMessage[] },
  onProgress?: (p: ReembedProgress) => void,
): Promise<void> {
  for (const m of arrived.messages) {
    await memory.recordTurn({
      conversationId: m.conversationId,
      role: m.role,
      text: m.text,
      turnId: m.turnId,
    });
  }
  if (arrived.entries) await memory.reembed(onProgress);
}
