// The memory tools (docs/design.md, "The tools") over Dexie. Every method resolves to a result
// object; bad input and failures come back as ToolError and write nothing. Multi-row writes are
// single transactions.
import { openStore } from './store';
import { adminTools } from './tools/admin';
import { backupTools } from './tools/backup';
import { changeTools } from './tools/changes';
import { conversationTools } from './tools/conversations';
import { detailTools } from './tools/detail';
import { entryTools } from './tools/entry';
import { foreignTools } from './tools/foreign';
import { historyTools } from './tools/history';
import { portableTools } from './tools/portable';
import { turnStartTools } from './tools/prepare-turn';
import { readTools } from './tools/read';
import { recallTools } from './tools/recall';
import { suggestTools } from './tools/suggest';
import { turnsTools } from './tools/turns';
import { writeTools } from './tools/write';
import type { MemoryApi, OpenMemoryOptions } from './types';

export { mergePatch } from './tools/write';

export function createMemoryStore(options: OpenMemoryOptions): MemoryApi {
  const ctx = openStore(options);
  const read = readTools(ctx);
  const history = historyTools(ctx);
  const entry = entryTools(ctx);
  const turns = turnsTools(ctx);
  const conversations = conversationTools(ctx);
  const recall = recallTools(ctx);
  return {
    ...writeTools(ctx),
    ...read,
    ...recall,
    ...history,
    ...turns,
    ...portableTools(ctx),
    ...conversations,
    ...entry,
    ...detailTools(ctx, { ...read, ...history, ...entry }),
    ...turnStartTools({ ...read, ...recall, ...turns, ...conversations }),
    ...adminTools(ctx),
    ...backupTools(ctx),
    ...foreignTools(ctx),
    ...changeTools(ctx),
    ...suggestTools(ctx),
    setTokenCounter: (fn) => {
      ctx.state.countTokens = typeof fn === 'function' ? fn : null;
    },
    modelInfo: async () => {
      const info = await ctx.model();
      if ('status' in info) throw Object.assign(new Error(info.message), { code: info.code });
      return info;
    },
    close: async () => ctx.close(),
  };
}
