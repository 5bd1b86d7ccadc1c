// Preview harness for the memory explorer (tree, map, search): a fake memory client over
// canned or generated entries, and timings of the first render with many entries.
// Scenarios: ?n=5000 generates that many entries (default: a small hand-written set with
// hostile content), ?n=0 is an empty memory, ?scenario=error fails to load the index;
// &view=map opens the map, &measure-map=1 times the map then goes back to the tree,
// &select=<path> selects a path from outside, &filter=<text> types it, &width=<px> sets the
// column width (default 480; the full width on a phone). Search "fail" or "throw" for errors.
// Timings (ms, performance.now) show under the column and in `window.__perf`.
import type {
  ChunkView,
  EntrySummary,
  HeadingChild,
  HeadingResult,
  JsonValue,
  NotFoundResult,
  ToolError,
} from '../../../src/memory/types';
import { notifyMemoryChange } from '../../../src/ui/memory-watch';
import '../../../src/ui/sm-explorer';
import type { SmMemoryMap } from '../../../src/ui/sm-memory-map';
import type { SmMemoryTree } from '../../../src/ui/sm-memory-tree';
import { buildTree } from '../../../src/ui/tree-model';
import type { MemoryClient } from '../../../src/worker-client';

const params = new URLSearchParams(location.search);
const count = params.has('n') ? Number(params.get('n')) : -1;
const width = Number(params.get('width') ?? 480);

const sheet = new CSSStyleSheet();
sheet.replaceSync(`
  html, body { margin: 0; height: 100%; }
  body { display: flex; flex-direction: column; background: #f6f7f9; font: 13px system-ui, sans-serif; }
  #tools { display: flex; gap: 8px; align-items: center; padding: 8px 12px; flex-wrap: wrap; }
  #tools output { color: #5d6877; overflow-wrap: anywhere; }
  #column { flex: 1; min-height: 0; width: ${width}px; max-width: 100%; box-sizing: border-box;
    padding: 12px; background: #fff; border-right: 1px solid #d5dae1; }
  #perf { margin: 0; padding: 4px 12px; font: 11px monospace; color: #5d6877; }
  #perf:empty { display: none; }
`);
document.adoptedStyleSheets = [sheet];

const DAY = 86_400_000;
const now = Date.now();

// A small deterministic PRNG, so screenshots are stable between runs.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const contents = new Map<string, JsonValue>();

function entry(path: string, ageDays: number, content: JsonValue, chunks = 0): EntrySummary {
  contents.set(path, content);
  const modified = now - ageDays * DAY;
  return {
    path,
    version: 1 + Math.floor(ageDays % 3),
    created: modified - 5 * DAY,
    modified,
    accessed: modified,
    size: JSON.stringify(content).length,
    chunks,
  };
}

function demoEntries(): EntrySummary[] {
  return [
    entry('User/Name', 40, 'Sam Rivera', 1),
    entry('User/Preferences/Coffee', 0.02, 'Flat white, no sugar; oat milk on weekdays.', 3),
    entry('User/Preferences/Music', 3, { likes: ['jazz', 'ambient'], dislikes: ['dubstep'] }, 2),
    entry('User/Preferences/Editor', 12, { theme: 'light', font: 'JetBrains Mono', size: 14 }),
    entry('User/Preferences', 20, 'Prefers short answers with examples.'),
    entry('User/Health/Allergies', 90, ['peanuts', 'penicillin'], 2),
    entry('User/Health/Running', 0.3, { weekly_km: 32, goal: 'half marathon in October' }, 4),
    entry('Projects/HaloWeave/Goals/Phase1', 0.1, 'Ship the offline editor by June.', 5),
    entry('Projects/HaloWeave/Goals/Phase2', 2, 'Sync across devices, end-to-end encrypted.', 2),
    entry(
      'Projects/HaloWeave/Decisions/Storage',
      6,
      { choice: 'IndexedDB via Dexie', why: 'offline-first' },
      3,
    ),
    entry(
      'Projects/HaloWeave/Decisions/Framework',
      8,
      { choice: 'Lit', why: 'small, standard' },
      1,
    ),
    entry('Projects/HaloWeave/People/Ana', 1, 'Design lead; prefers async reviews.', 2),
    entry('Projects/HaloWeave/People/Tom', 30, 'Backend; on leave in August.'),
    entry('Projects/HaloWeave', 0.5, { status: 'active', started: '2025-02-01' }, 6),
    entry('Projects/Garden/Plan', 45, 'Tomatoes by the south wall; basil in pots.', 1),
    entry('Projects/Garden/Harvest 2024', 200, { tomatoes_kg: 14, basil: 'plenty' }),
    entry('Projects/Thesis/Outline', 400, 'Chapters: intro, method, results, discussion.'),
    entry('Recipes/Dinner/Lentil soup', 7, 'Red lentils, carrot, cumin, lemon at the end.', 2),
    entry('Recipes/Dinner/Risotto', 15, 'Arborio, stock warm, stir, parmesan.'),
    entry('Recipes/Breakfast/Overnight oats', 60, 'Oats, yoghurt, milk, chia; 8 hours.'),
    entry('Recipes/Dinner/Pad thai 2', 4, 'Tamarind, fish sauce, palm sugar.'),
    entry('Recipes/Dinner/Pad thai 10', 5, 'Variant with tofu.'),
    entry('Notes/<img src=x onerror=alert(1)>', 0.01, '<script>alert("x")</script> stays text', 1),
    entry(
      'Notes/A very long heading that keeps going and going to test the truncation of labels',
      25,
      'Long.',
    ),
    entry('Notes/Books/To read', 10, ['The Dispossessed', 'Piranesi', 'Stoner'], 1),
    entry('Travel/Lisbon 2025', 35, { flights: 'TAP 1234', hotel: 'Alfama' }, 3),
    entry('Travel/Japan/Itinerary', 120, 'Tokyo 4 nights, Kyoto 3, Osaka 2.', 2),
    entry('Travel/Japan/Phrases', 118, ['sumimasen', 'arigatou gozaimasu']),
  ];
}

const WORDS = [
  'Alpha',
  'Atlas',
  'Beacon',
  'Cedar',
  'Delta',
  'Ember',
  'Falcon',
  'Garnet',
  'Harbor',
  'Iris',
  'Juniper',
  'Kestrel',
  'Lumen',
  'Maple',
  'Nimbus',
  'Onyx',
  'Pioneer',
  'Quartz',
  'Raven',
  'Sable',
  'Tundra',
  'Umber',
  'Vega',
  'Willow',
  'Xenon',
  'Yarrow',
  'Zephyr',
];
const TOPS = [
  'User',
  'Projects',
  'People',
  'Recipes',
  'Travel',
  'Notes',
  'Work',
  'Health',
  'Books',
  'Ideas',
  'Finance',
  'Home',
];

function generated(n: number): EntrySummary[] {
  const rand = rng(42);
  const paths = new Set<string>();
  const out: EntrySummary[] = [];
  while (out.length < n) {
    const depth = 2 + Math.floor(rand() * 3 + rand());
    const segs = [TOPS[Math.floor(rand() ** 1.4 * TOPS.length)]];
    for (let d = 1; d < depth; d++) {
      const w = WORDS[Math.floor(rand() ** (d === 1 ? 1.2 : 1) * WORDS.length)];
      segs.push(d === depth - 1 ? `${w} ${Math.floor(rand() * 40)}` : w);
    }
    const path = segs.join('/');
    if (paths.has(path)) continue;
    paths.add(path);
    const age = rand() ** 3 * 420;
    const text = `Generated note ${out.length} about ${segs.join(' ')}. `.repeat(
      1 + Math.floor(rand() * 8),
    );
    out.push(entry(path, age, text, Math.floor(rand() ** 2 * 8)));
  }
  return out;
}

let entries: EntrySummary[] = count < 0 ? demoEntries() : generated(count);

// --- The fake client: just the methods the explorer calls. ------------------------------------

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return (h >>> 0) / 4294967296;
}

function similarity(query: string, path: string): number {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const hit = words.some((w) => path.toLowerCase().includes(w)) ? 0.35 : 0;
  return Math.min(0.97, 0.25 + hash(query + path) * 0.35 + hit);
}

function chunksFor(query: string, path: string): ChunkView[] {
  const sim = similarity(query, path);
  if (sim < 0.5) return [];
  return [
    { role: 'user', text: `I told you about ${path.split('/').pop()} last week.`, similarity: sim },
    { role: 'assistant', text: 'Noted — I will keep that in mind.', similarity: sim - 0.08 },
  ];
}

async function queryMemoryHeading(
  path: unknown,
  query?: unknown,
): Promise<HeadingResult | NotFoundResult | ToolError> {
  await new Promise((r) => setTimeout(r, 250));
  const q = typeof query === 'string' ? query : '';
  if (q === 'fail') {
    return {
      status: 'ERROR',
      code: 'MODEL_UNAVAILABLE',
      message: 'The embedding model is not loaded yet; try again in a moment.',
    };
  }
  if (q === 'throw') throw new Error('The memory worker stopped');
  const root = String(path);
  const tree = buildTree(entries);
  const node = tree.byPath.get(root);
  if (!node || node.children.length === 0) {
    return { status: 'NOT_FOUND', path: root, message: `No entry or heading at "${root}".` };
  }
  const children: HeadingChild[] = node.children.map((c): HeadingChild => {
    const recency = Math.exp(-(now - c.newest) / DAY / 30);
    if (c.entry) {
      const sim = similarity(q, c.path);
      return {
        path: c.path,
        heading: c.heading,
        content: contents.get(c.path) ?? null,
        modified: new Date(c.entry.modified),
        descendants: c.descendants || undefined,
        similarity: sim,
        recency,
        score: 0.7 * sim + 0.3 * recency,
        relevantChunks: chunksFor(q, c.path),
      };
    }
    let best = c;
    while (!best.entry) best = best.children[0];
    const sim = similarity(q, best.path);
    return {
      path: c.path,
      heading: c.heading,
      isHeading: true,
      descendants: c.descendants,
      modified: new Date(c.newest),
      similarity: sim,
      recency,
      score: 0.7 * sim + 0.3 * recency,
      bestMatch: {
        path: best.path,
        heading: best.heading,
        content: contents.get(best.path) ?? null,
        relevantChunks: chunksFor(q, best.path),
      },
    };
  });
  children.sort((a, b) => (b.score ?? 0) - (a.score ?? 0));
  return {
    status: 'SUCCESS',
    path: root,
    query: q,
    children: children.slice(0, 10),
    totalChildren: children.length,
  };
}

const perf: Record<string, number> = {};
let indexRequested = 0;

const fake = {
  async memoryIndex(): Promise<EntrySummary[]> {
    if (params.get('scenario') === 'error') throw new Error('The memory worker failed to start');
    indexRequested = performance.now();
    return entries.slice();
  },
  queryMemoryHeading,
};

// --- Wiring and timings. ----------------------------------------------------------------------

const explorer = document.querySelector('sm-explorer')!;
const last = document.querySelector<HTMLOutputElement>('#last')!;
const perfOut = document.querySelector<HTMLPreElement>('#perf')!;
explorer.addEventListener('sm-select-path', (e) => {
  last.value = `sm-select-path: ${JSON.stringify(e.detail.path)}`;
});

function frame(): Promise<void> {
  return new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
}

function inner<T extends Element>(selector: string): T | null {
  return explorer.shadowRoot?.querySelector<T>(selector) ?? null;
}

async function until(test: () => boolean, limit = 10_000): Promise<void> {
  const start = performance.now();
  while (!test() && performance.now() - start < limit) await frame();
}

function report(): void {
  perfOut.textContent = Object.entries(perf)
    .map(([k, v]) => `${k}: ${v.toFixed(1)} ms`)
    .join('\n');
  (window as unknown as { __perf: Record<string, number> }).__perf = perf;
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const tb = performance.now();
  buildTree(entries);
  perf.buildTreeOnly = performance.now() - tb;
  explorer.memory = fake as unknown as MemoryClient;
  const tree = () => inner<SmMemoryTree>('sm-memory-tree');
  await until(() => (tree()?.shadowRoot?.querySelectorAll('[role=treeitem]').length ?? 0) > 0);
  perf.treeFirstRender = performance.now() - (indexRequested || t0);
  report();

  const select = params.get('select');
  if (select) explorer.selectedPath = select;
  const filter = params.get('filter');
  if (filter) {
    const input = inner<HTMLInputElement>('input[aria-label="Filter paths"]')!;
    const tf = performance.now();
    input.value = filter;
    input.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true }));
    // The filter applies once typing pauses (120 ms), then the tree and map redo their work.
    await until(() => tree()?.filter === filter);
    await explorer.updateComplete;
    await tree()?.updateComplete;
    perf.filterTypedToShown = performance.now() - tf;
    // The tree's own work for this filter, timed alone.
    const t = tree()!;
    t.filter = '';
    await t.updateComplete;
    const ta = performance.now();
    t.filter = filter;
    await t.updateComplete;
    perf.treeFilter = performance.now() - ta;
    await frame();
  }
  if (params.get('view') === 'map' || params.has('measure-map')) {
    const tm = performance.now();
    inner<HTMLButtonElement>('#tab-map')!.click();
    const map = () => inner<SmMemoryMap>('sm-memory-map');
    await until(() => (map()?.shadowRoot?.querySelectorAll('svg.map path').length ?? 0) > 0);
    perf.mapFirstRender = performance.now() - tm;
    perf.mapLayoutOnly = map()?.lastLayoutMs ?? -1;
    perf.mapCells = map()?.cellCount ?? 0;
    perf.mapElements = map()?.shadowRoot?.querySelectorAll('svg.map *').length ?? 0;
    if (params.has('measure-map') && params.get('view') !== 'map') {
      inner<HTMLButtonElement>('#tab-tree')!.click();
    }
  }
  report();
}

document.querySelector('#add')!.addEventListener('click', () => {
  const path = `Projects/HaloWeave/Goals/Phase${entries.length}`;
  entries = [...entries, entry(path, 0, 'Saved just now from the chat.', 2)];
  explorer.selectedPath = path;
  // What the worker reports after a write is committed.
  notifyMemoryChange(['structured_memory']);
});
document.querySelector('#reveal')!.addEventListener('click', () => {
  const deep = [...entries].sort((a, b) => b.path.split('/').length - a.path.split('/').length);
  explorer.selectedPath = deep[Math.floor(deep.length / 3)].path;
});

void main();
