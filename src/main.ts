// Composition root: start the memory worker and give its proxy to the app element.
import { whenAppMayStart } from './pwa';
import { startMemoryWorker, type MemoryClient } from './worker-client';
import './ui/sm-app';

// The page has no stylesheet of its own (CSP style-src 'self', Lit styles live in shadow roots).
document.body.style.margin = '0';

const app =
  document.querySelector('sm-app') ?? document.body.appendChild(document.createElement('sm-app'));
// On a first visit the worker starts once the service worker is in control, so the model is
// fetched once, through its cache (docs/hosting.md); calls made before then wait for it.
const started = whenAppMayStart().then(
  () =>
    startMemoryWorker({
      onError: (message) => {
        app.workerError = message;
      },
    }).memory,
);
started.catch((error: unknown) => {
  app.workerError = error instanceof Error ? error.message : String(error);
});
app.memory = whenStarted(started);

/** A client whose every method waits for the worker to start, then calls it. */
function whenStarted(client: Promise<MemoryClient>): MemoryClient {
  return new Proxy({} as MemoryClient, {
    get(_target, key) {
      // Like the worker's own client: only method names answer (not Lit's probes or `then`).
      if (typeof key !== 'string' || key.startsWith('_$') || key === 'then') return undefined;
      return async (...args: unknown[]) => {
        const memory = (await client) as unknown as Record<string, (...a: unknown[]) => unknown>;
        return memory[key](...args);
      };
    },
  });
}
