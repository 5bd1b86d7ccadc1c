// Harness for the in-page model's worker (workers/in-page-model.worker.ts), under the app's CSP:
// the test hands it GGUF bytes and drives load, chat and stop through `window.harness`; the
// bench (bench/in-page-model.ts) reads its times and the main thread's long tasks.
import { proxy, wrap } from 'comlink';
import type { InPageModelApi } from '../../../workers/in-page-model.worker';
import type { InPageChatRequest } from '../../../src/llm/in-page/types';

const worker = new Worker(new URL('../../../workers/in-page-model.worker.ts', import.meta.url), {
  type: 'module',
});
const model = wrap<InPageModelApi>(worker);

/** Main-thread tasks over 50 ms seen since the page opened (the engine must not cause any). */
const longTasks: { start: number; duration: number }[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) longTasks.push({ start: e.startTime, duration: e.duration });
}).observe({ type: 'longtask', buffered: true });

const harness = {
  pieces: [] as string[],
  /**
   * performance.now() when the last chat was asked, its first and last pieces came, Stop was
   * asked (0: it was not), and it ended.
   */
  times: { asked: 0, first: 0, last: 0, stopped: 0, ended: 0 },
  longTasks,
  /** Loads the GGUF at `url`; `threads` 1 makes a seeded generation repeat exactly. */
  async load(url: string, context: number, threads?: number) {
    const blob = await (await fetch(url)).blob();
    return model.load([blob], { context, threads });
  },
  /** A chat; with `stopAfter`, Stop is asked as the piece of that number arrives. */
  async chat(request: InPageChatRequest, stopAfter = 0) {
    harness.pieces = [];
    const times = { asked: performance.now(), first: 0, last: 0, stopped: 0, ended: 0 };
    harness.times = times;
    const done = await model.chat(
      request,
      proxy((text: string) => {
        const now = performance.now();
        if (!harness.pieces.length) times.first = now;
        times.last = now;
        harness.pieces.push(text);
        if (stopAfter && harness.pieces.length === stopAfter) {
          times.stopped = performance.now();
          void model.stop();
        }
      }),
    );
    times.ended = performance.now();
    return done;
  },
  stop: () => model.stop(),
  /** The longest main-thread task over 50 ms during the last chat (0: none). */
  longestTaskWhileGenerating(): number {
    const { asked, ended } = harness.times;
    const during = longTasks.filter((t) => t.start + t.duration >= asked && t.start <= ended);
    return Math.max(0, ...during.map((t) => Math.round(t.duration)));
  },
};

Object.assign(window, { harness, crossOriginIsolatedPage: crossOriginIsolated });
