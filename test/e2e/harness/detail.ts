// Preview harness for <sm-entry-detail>, <sm-settings> and <sm-data-menu>: a fake memory client
// (a Map of entries plus history, no worker, no Dexie) and the app's wiring of their events.
// Open /test/e2e/harness/detail.html?path=Projects/Apollo/Goals under `npx vite`.
import '../../../src/ui/sm-entry-detail';
import '../../../src/ui/sm-settings';
import '../../../src/ui/sm-data-menu';
import { DEFAULT_SETTINGS, type AppSettings } from '../../../src/app/settings';
import type {
  ChunkView,
  EntrySummary,
  HeadingChild,
  HistoryResult,
  ImportResult,
  JsonValue,
  ToolError,
} from '../../../src/memory/types';
import type { MemoryClient } from '../../../src/worker-client';

interface Row {
  path: string;
  content: JsonValue;
  chunks: (ChunkView & { turn_id: number })[];
  created: Date;
  modified: Date;
  accessed: Date;
  version: number;
}

interface Hist {
  id: number;
  path: string;
  version: number;
  reason: HistoryResult['versions'][number]['reason'];
  replaced: Date;
  row: Row;
}

const DAY = 86_400_000;
const now = Date.now();
const at = (daysAgo: number) => new Date(now - daysAgo * DAY);

function err(code: ToolError['code'], message: string): ToolError {
  return { status: 'ERROR', code, message };
}

function createFakeMemory() {
  const rows = new Map<string, Row>();
  const history: Hist[] = [];
  let nextHist = 1;
  const delay = () => new Promise((r) => setTimeout(r, 120));

  const put = (path: string, content: JsonValue, daysAgo: number, chunks: Row['chunks'] = []) =>
    rows.set(path, {
      path,
      content,
      chunks,
      created: at(daysAgo + 20),
      modified: at(daysAgo),
      accessed: at(daysAgo / 2),
      version: 1,
    });
  const archive = (row: Row, reason: Hist['reason'], when = new Date()) =>
    history.push({
      id: nextHist++,
      path: row.path,
      version: row.version,
      reason,
      replaced: when,
      row: structuredClone(row),
    });

  put(
    'Projects/Apollo/Goals',
    {
      phase: 1,
      goals: ['Ship the PWA', 'Bundle an offline embedding model'],
      owner: 'Dana',
      deadline: '2026-12-01',
    },
    2,
    [
      {
        role: 'user',
        text: 'For Apollo phase 1 the goal is to ship the PWA, and we also need an offline model.',
        similarity: 0.82,
        turn_id: 14,
      },
      {
        role: 'assistant',
        text: 'Noted: Apollo phase 1 ships the PWA and bundles an offline embedding model.',
        similarity: 0.74,
        turn_id: 15,
      },
      {
        role: 'user',
        text: 'Dana owns it; the deadline is the first of December.',
        similarity: 0.61,
        turn_id: 16,
      },
    ],
  );
  // Two earlier versions of Goals.
  const goals = rows.get('Projects/Apollo/Goals')!;
  archive(
    { ...goals, version: 1, content: { phase: 1, goals: ['Ship the PWA'], owner: 'Sam' } },
    'update',
    at(9),
  );
  archive(
    {
      ...goals,
      version: 2,
      content: { phase: 1, goals: ['Ship the PWA'], owner: 'Dana', deadline: '2026-11-15' },
    },
    'update',
    at(2),
  );
  goals.version = 3;
  put(
    'Projects/Apollo/Notes',
    'Check the XSS case: <img src=x onerror=alert(1)> and <script>alert(2)</script> must stay text.\nSecond line of the note.',
    5,
  );
  put('Projects/Apollo/Team/Dana', { role: 'lead', timezone: 'Europe/Berlin' }, 12);
  put('Projects/Apollo/Team/Sam', { role: 'design' }, 30);
  put('Projects/Hermes', { status: 'paused', reason: 'waiting for budget' }, 40);
  put('Preferences/Food', 'Likes spicy food, no mushrooms.', 70);
  put('Preferences/Food/Breakfast', 'Porridge on weekdays.', 3);
  // Deleted: only in history.
  archive(
    {
      path: 'Archive/Old idea',
      content: { idea: 'A memory palace UI' },
      chunks: [],
      created: at(60),
      modified: at(50),
      accessed: at(45),
      version: 2,
    },
    'delete',
    at(1),
  );

  const below = (path: string) =>
    [...rows.keys()].filter((p) => path === '' || p.startsWith(`${path}/`));

  const api = {
    async memoryIndex(): Promise<EntrySummary[]> {
      return [...rows.values()].map((r) => ({
        path: r.path,
        version: r.version,
        created: r.created.getTime(),
        modified: r.modified.getTime(),
        accessed: r.accessed.getTime(),
        size: JSON.stringify(r.content).length,
        chunks: r.chunks.length,
      }));
    },
    async queryMemory(path: string) {
      await delay();
      const r = rows.get(path);
      if (!r) return { status: 'NOT_FOUND' as const, path, message: `Nothing at "${path}"` };
      r.accessed = new Date();
      return {
        status: 'SUCCESS' as const,
        path,
        content: structuredClone(r.content),
        contextChunks: r.chunks.map((c) => ({ ...c })),
        metadata: {
          created: r.created,
          modified: r.modified,
          accessed: r.accessed,
          version: r.version,
        },
      };
    },
    async queryMemoryHeading(path: string) {
      const depth = path === '' ? 0 : path.split('/').length;
      const kids = new Map<string, HeadingChild>();
      for (const p of below(path)) {
        const seg = p.split('/')[depth];
        const child = p
          .split('/')
          .slice(0, depth + 1)
          .join('/');
        const r = rows.get(child);
        const desc = below(child).filter((q) => q !== child).length;
        const modified = new Date(
          Math.max(...[child, ...below(child)].map((q) => rows.get(q)?.modified.getTime() ?? 0)),
        );
        kids.set(
          child,
          r
            ? {
                path: child,
                heading: seg,
                content: r.content,
                modified,
                ...(desc ? { descendants: desc } : {}),
              }
            : { path: child, heading: seg, isHeading: true, descendants: desc, modified },
        );
      }
      const children = [...kids.values()].sort(
        (a, b) => b.modified.getTime() - a.modified.getTime(),
      );
      if (!children.length) return { status: 'NOT_FOUND' as const, path, message: 'no children' };
      return { status: 'SUCCESS' as const, path, children, totalChildren: children.length };
    },
    // No change reports here (the harness reloads its views itself): nothing to watch.
    async unwatchDetail() {},
    async entryDetail(path: string) {
      const hist = await api.getHistory(path);
      const under = below(path)
        .filter((p) => p !== path)
        .sort();
      const heading = under.length ? await api.queryMemoryHeading(path) : undefined;
      const kids = heading?.status === 'SUCCESS' ? heading.children : [];
      const base = {
        status: 'SUCCESS' as const,
        path,
        history: hist.versions,
        below: under,
        children: kids,
        totalChildren: kids.length,
      };
      const r = rows.get(path);
      if (r) {
        const entry = {
          path,
          content: structuredClone(r.content),
          contextChunks: r.chunks.map((c) => ({ ...c })),
          model: 'fake',
          created: r.created,
          modified: r.modified,
          accessed: r.accessed,
          version: r.version,
        };
        const sources = Object.fromEntries(r.chunks.map((c) => [c.turn_id, 1]));
        return { ...base, kind: 'entry' as const, entry, sources };
      }
      return { ...base, kind: under.length || path === '' ? 'heading' : 'missing' } as const;
    },
    async getHistory(path: string): Promise<HistoryResult> {
      return {
        status: 'SUCCESS',
        path,
        versions: history
          .filter((h) => h.path === path)
          .sort((a, b) => b.version - a.version)
          .map((h) => ({
            id: h.id,
            version: h.version,
            reason: h.reason,
            replaced: h.replaced,
            content: h.row.content,
            modified: h.row.modified,
          })),
      };
    },
    async updateMemory(path: string, patch: { [k: string]: JsonValue }) {
      await delay();
      const r = rows.get(path);
      if (!r) return { status: 'NOT_FOUND' as const, path, message: 'gone' };
      archive(r, 'update');
      const content = { ...(r.content as { [k: string]: JsonValue }) };
      for (const [k, v] of Object.entries(patch)) {
        if (v === null) delete content[k];
        else content[k] = v;
      }
      Object.assign(r, { content, version: r.version + 1, modified: new Date() });
      log(`updateMemory(${path}, ${JSON.stringify(patch)})`);
      return save(r);
    },
    async saveMemory(path: string, content: JsonValue, contextTokens: number) {
      await delay();
      if (JSON.stringify(content).length > 32_000)
        return err('CONTENT_TOO_LARGE', 'content is larger than 32 KB');
      const r = rows.get(path);
      if (r) {
        archive(r, 'update');
        Object.assign(r, { content, chunks: [], version: r.version + 1, modified: new Date() });
      } else put(path, content, 0);
      log(`saveMemory(${path}, …, ${contextTokens})`);
      return save(rows.get(path)!);
    },
    async moveMemory(from: string, to: string) {
      await delay();
      to = to.replace(/^\/|\/$/g, '');
      if (!to || to.includes('//')) return err('INVALID_PATH', `path "${to}" is not valid`);
      if (rows.has(to) || below(to).length)
        return err('INVALID_ARGUMENT', `"${to}" already exists; choose a new path`);
      const moving = [from, ...below(from)].filter((p) => rows.has(p));
      if (!moving.length) return { status: 'NOT_FOUND' as const, path: from, message: 'gone' };
      for (const p of moving) {
        const r = rows.get(p)!;
        archive(r, 'move');
        rows.delete(p);
        const np = to + p.slice(from.length);
        rows.set(np, { ...r, path: np, version: r.version + 1, modified: new Date() });
      }
      return { status: 'SUCCESS' as const, from, to, moved: moving.length };
    },
    async deleteMemory(path: string, recursive = false) {
      await delay();
      const kids = below(path).filter((p) => p !== path);
      if (kids.length && !recursive)
        return err('HAS_CHILDREN', `"${path}" has ${kids.length} entries below it`);
      const gone = [path, ...kids].filter((p) => rows.has(p));
      if (!gone.length) return { status: 'NOT_FOUND' as const, path, message: 'gone' };
      for (const p of gone) {
        archive(rows.get(p)!, 'delete');
        rows.delete(p);
      }
      return { status: 'SUCCESS' as const, path, deleted: gone.length };
    },
    async restoreMemory(id: number) {
      await delay();
      const h = history.find((x) => x.id === id);
      if (!h) return { status: 'NOT_FOUND' as const, path: '', message: `No version ${id}` };
      const current = rows.get(h.path);
      if (current) archive(current, 'restore');
      const top = Math.max(
        current?.version ?? 0,
        ...history.filter((x) => x.path === h.path).map((x) => x.version),
      );
      rows.set(h.path, { ...structuredClone(h.row), version: top + 1, modified: new Date() });
      return save(rows.get(h.path)!);
    },
    async exportMarkdown(root?: string): Promise<string | ToolError> {
      await delay();
      const paths = root ? [root, ...below(root)].filter((p) => rows.has(p)) : [...rows.keys()];
      if (!paths.length) return err('NOT_FOUND', `Nothing at "${root}"`);
      return paths
        .map(
          (p) => `# ${p}\n\n\`\`\`json\n${JSON.stringify(rows.get(p)!.content, null, 2)}\n\`\`\``,
        )
        .join('\n\n');
    },
    async exportJson(): Promise<string | ToolError> {
      await delay();
      return JSON.stringify({ format: 'structured-memory', entries: [...rows.values()] });
    },
    async importMarkdown(text: string): Promise<ImportResult | ToolError> {
      await new Promise((r) => setTimeout(r, 900));
      if (!text.includes('#'))
        return err(
          'INVALID_CONTENT',
          'The file was not imported; nothing changed. line 1: expected a heading (# Path)',
        );
      return { status: 'SUCCESS', imported: 3, created: 2, updated: 1 };
    },
    async importJson(text: string, mode: string): Promise<ImportResult | ToolError> {
      await new Promise((r) => setTimeout(r, 900));
      try {
        JSON.parse(text);
      } catch (e) {
        return err(
          'INVALID_CONTENT',
          `The backup was not imported; nothing changed. It is not JSON: ${(e as Error).message}`,
        );
      }
      log(`importJson(…, ${mode})`);
      return mode === 'replace'
        ? { status: 'SUCCESS', imported: 12, created: 12, updated: 0 }
        : { status: 'SUCCESS', imported: 12, created: 4, updated: 8 };
    },
  };

  function save(r: Row) {
    return {
      status: 'SUCCESS' as const,
      path: r.path,
      version: r.version,
      contextTokens: 0,
      chunksStored: r.chunks.length,
    };
  }

  return api;
}

function log(message: string): void {
  const el = document.getElementById('log');
  if (el) el.textContent = message;
  console.log('[harness]', message);
}

const memory = createFakeMemory() as unknown as MemoryClient;
const detail = document.querySelector('sm-entry-detail')!;
const menu = document.querySelector('sm-data-menu')!;
const settingsDialog = document.querySelector('sm-settings')!;
const params = new URLSearchParams(location.search);
let settings: AppSettings = { ...DEFAULT_SETTINGS, persona: 'You are a concise assistant.' };

detail.memory = memory;
detail.path = params.get('path') ?? 'Projects/Apollo/Goals';
menu.memory = memory;
menu.selectedPath = detail.path;
settingsDialog.settings = settings;
if (params.has('menuRight')) document.querySelector('.bar')!.classList.add('right');
if (params.has('reembed')) settingsDialog.reembed = { done: 37, total: 120 };

document.addEventListener('sm-select-path', (e) => {
  detail.path = e.detail.path;
  menu.selectedPath = e.detail.path;
  log(`sm-select-path ${JSON.stringify(e.detail)}`);
});
document.addEventListener('sm-open-message', (e) =>
  log(`sm-open-message ${JSON.stringify(e.detail)}`),
);
document.addEventListener('sm-notice', (e) => log(`sm-notice ${e.detail.message}`));
document.addEventListener('sm-save-settings', (e) => {
  settings = e.detail.settings;
  settingsDialog.settings = settings;
  log(`sm-save-settings ${JSON.stringify(settings)}`);
});
document.getElementById('open-settings')!.addEventListener('click', () => {
  void settingsDialog.open();
});
