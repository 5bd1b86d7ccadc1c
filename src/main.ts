// Composition root: start the memory worker, compose the app around its proxy (src/app/app.ts:
// settings, connector, chat session) and hand that to the app element.
import { App } from './app/app';
import { Backups } from './app/backups';
import { whenAppMayStart } from './pwa';
import { followMemoryChanges } from './ui/memory-watch';
import { startMemoryWorker, type MemoryClient } from './worker-client';
import './ui/sm-app';

// The page has no stylesheet of its own (CSP style-src 'self', Lit styles live in shadow roots).
document.body.style.margin = '0';

const element =
  document.querySelector('sm-app') ?? document.body.appendChild(document.createElement('sm-app'));
// On a first visit the worker starts once the service worker is in control, so the model is
// fetched once, through its cache (docs/hosting.md); calls made before then wait for it.
const started = whenAppMayStart().then(
  () =>
    startMemoryWorker({
      onError: (message) => {
        element.workerError = message;
      },
    }).memory,
);
started.catch((error: unknown) => {
  element.workerError = error instanceof Error ? error.message : String(error);
});
const memory = whenStarted(started);
// First, before any load through this client: the views reload on the changes it reports.
void followMemoryChanges(memory);
const app = new App({ memory });
// The browser is asked to keep memory after the first save, not on a first visit (backups.ts).
const backups = new Backups({
  memory,
  settings: () => (app.state.settingsLoaded ? app.state.settings : undefined),
});
app.subscribe(() => backups.settingsChanged());
element.app = app;
element.backups = backups;
void app.start();
void backups.start();

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
