// Harness for the in-page model's worker (workers/in-page-model.worker.ts), under the app's CSP:
// the test hands it GGUF bytes and drives load, chat and stop through `window.harness`.
import { proxy, wrap } from 'comlink';
import type { InPageModelApi } from '../../../workers/in-page-model.worker';
import type { InPageChatRequest } from '../../../src/llm/in-page/types';

const worker = new Worker(new URL('../../../workers/in-page-model.worker.ts', import.meta.url), {
  type: 'module',
});
const model = wrap<InPageModelApi>(worker);

const harness = {
  pieces: [] as string[],
  async load(url: string, context: number) {
    const blob = await (await fetch(url)).blob();
    return model.load([blob], { context });
  },
  async chat(request: InPageChatRequest) {
    harness.pieces = [];
    return model.chat(
      request,
      proxy((text: string) => {
        harness.pieces.push(text);
      }),
    );
  },
  stop: () => model.stop(),
};

Object.assign(window, { harness, crossOriginIsolatedPage: crossOriginIsolated });
