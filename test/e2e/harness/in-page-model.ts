// Harness for the in-page model's worker (workers/in-page-model.worker.ts), under the app's CSP:
// the test hands it GGUF bytes and drives load, chat and stop through `window.harness`.
import { proxy, wrap } from 'comlink';
import type { InPageModelApi } from '../../../workers/in-page-model.worker';
import type { InPageChatRequest } from '../../../src/llm/in-page/types';

const worker = new Worker(new URL('../../../workers/in-page-model.worker.ts', import.meta.url), {
  type: 'module',
});
const model = wrap<InPageModelApi>(worker);

/** Main-thread tasks over 50 ms seen since the page opened (the engine must not cause any). */
const longTasks: number[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) longTasks.push(e.duration);
}).observe({ type: 'longtask', buffered: true });

const harness = {
  pieces: [] as string[],
  /** performance.now() when the last chat was asked, its first piece came, and it ended. */
  times: { asked: 0, first: 0, ended: 0 },
  longTasks,
  async load(url: string, context: number) {
    const blob = await (await fetch(url)).blob();
    return model.load([blob], { context });
  },
  async chat(request: InPageChatRequest) {
    harness.pieces = [];
    harness.times = { asked: performance.now(), first: 0, ended: 0 };
    const done = await model.chat(
      request,
      proxy((text: string) => {
        if (!harness.pieces.length) harness.times.first = performance.now();
        harness.pieces.push(text);
      }),
    );
    harness.times.ended = performance.now();
    return done;
  },
  stop: () => model.stop(),
};

Object.assign(window, { harness, crossOriginIsolatedPage: crossOriginIsolated });
