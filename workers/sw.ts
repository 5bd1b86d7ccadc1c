// The app's service worker, built by vite-plugin-pwa (injectManifest) with its precache list:
// - the app shell is precached, so the app starts offline;
// - the ONNX runtime (`ort/`), the models (`models/`), the transformers.js chunk and the in-page
//   model's worker and WebAssembly file are cached the first time the app itself fetches them (the page starts its worker only once this service worker controls it),
//   so a first visit downloads each file once, and a build that never needs the runtime never
//   downloads it; each is kept under its build revision, so a new version refetches what changed;
// - every response it serves carries the cross-origin isolation headers, so the app gets threads
//   on hosts that cannot send headers (GitHub Pages): the coi-serviceworker technique.
// docs/hosting.md explains the whole design.
/// <reference lib="webworker" />
import { clientsClaim, type WorkboxPlugin } from 'workbox-core';
import {
  addPlugins,
  cleanupOutdatedCaches,
  createHandlerBoundToURL,
  precacheAndRoute,
  type PrecacheEntry,
} from 'workbox-precaching';
import { NavigationRoute, registerRoute } from 'workbox-routing';
import { CacheFirst, NetworkOnly } from 'workbox-strategies';
import { ISOLATION_HEADERS } from '../src/isolation';

declare const self: ServiceWorkerGlobalScope & { __WB_MANIFEST: (string | PrecacheEntry)[] };

/**
 * Files cached on first use instead of precached: the ONNX runtime, the models, the
 * transformers.js chunk, which only a transformer model (not the bundled one) loads, and the
 * model in this browser's worker and WebAssembly file (docs/in-page-model.md), which only that
 * kind of model server loads: after its first use it works offline.
 */
const ON_DEMAND = [
  /^ort\//,
  /^models\//,
  /^assets\/transformers\.web-[\w-]+\.js$/,
  /^assets\/in-page-model\.worker-[\w-]+\.js$/,
  /^assets\/wllama-[\w-]+\.wasm$/,
];
/** The cache of those files, keyed by URL and build revision. */
const FILES_CACHE = 'structured-memory-files';

const scope = new URL(self.registration.scope);

/** A response as served, plus COOP/COEP (kept as they are if the host sent its own). */
function withIsolation(response: Response): Response {
  // Opaque and error responses have no headers to add to.
  if (response.type === 'opaque' || response.type === 'error' || response.status === 0) {
    return response;
  }
  if (response.headers.has('Cross-Origin-Embedder-Policy')) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(ISOLATION_HEADERS)) headers.set(name, value);
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

const isolation: WorkboxPlugin = {
  handlerWillRespond: async ({ response }) => withIsolation(response),
};

const entries = self.__WB_MANIFEST.map((e) => (typeof e === 'string' ? { url: e } : e));
const onDemand = (url: string) => ON_DEMAND.some((pattern) => pattern.test(url));

/** Absolute URL (no query) of each on-demand file → its cache key, which names its revision. */
const fileKeys = new Map<string, string>();
for (const entry of entries) {
  if (!onDemand(entry.url)) continue;
  const url = new URL(entry.url, scope);
  if (entry.revision) url.searchParams.set('sm-revision', entry.revision);
  fileKeys.set(new URL(entry.url, scope).href, url.href);
}

/**
 * Workbox fetches a precached file that has a revision (no hash in its name: index.html, icons)
 * with `cache: 'reload'`, past the HTTP cache, so a first visit would download what the page
 * has just fetched a second time. `no-cache` asks the server instead whether the copy the
 * browser holds is current (a 304 and no body when it is), which is as safe: the revision
 * cannot be paired with a stale file.
 */
const revalidate: WorkboxPlugin = {
  requestWillFetch: async ({ request }) =>
    request.cache === 'reload' && request.mode !== 'navigate'
      ? new Request(request, { cache: 'no-cache' })
      : request,
};

/**
 * The shell is precached as `./`, the address the page itself was loaded from, so the
 * revalidation above finds the page's own copy (as `index.html` it would be a second download).
 */
const SHELL = './';
const shellEntries = entries
  .filter((e) => !onDemand(e.url))
  .map((e) => (e.url === 'index.html' ? { ...e, url: SHELL } : e));

addPlugins([revalidate, isolation]);
precacheAndRoute(shellEntries);
cleanupOutdatedCaches();

// Page loads get the app shell; a file path that is not precached is never answered with it.
const escaped = scope.pathname.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
registerRoute(
  new NavigationRoute(createHandlerBoundToURL(SHELL), {
    denylist: [new RegExp(`^${escaped}(ort|models|assets)/`)],
  }),
);

registerRoute(
  ({ request, url }) => request.method === 'GET' && fileKeys.has(url.origin + url.pathname),
  new CacheFirst({
    cacheName: FILES_CACHE,
    plugins: [
      {
        cacheKeyWillBeUsed: async ({ request }) => {
          const url = new URL(request.url);
          return fileKeys.get(url.origin + url.pathname) ?? request.url;
        },
        // Only a whole file: never an error page or a partial response.
        cacheWillUpdate: async ({ response }) => (response.status === 200 ? response : null),
      },
      isolation,
    ],
  }),
);

// Anything else of the app (same origin, in scope) goes to the network, with the headers too.
registerRoute(
  ({ url, sameOrigin }) => sameOrigin && url.href.startsWith(scope.href),
  new NetworkOnly({ plugins: [isolation] }),
);

/** Drops cached files of earlier versions (those whose revision is no longer in the build). */
async function pruneFiles(): Promise<void> {
  const cache = await caches.open(FILES_CACHE);
  const current = new Set(fileKeys.values());
  for (const request of await cache.keys()) {
    if (!current.has(request.url)) await cache.delete(request);
  }
}

self.addEventListener('activate', (event) => event.waitUntil(pruneFiles()));

// A new version waits until the person accepts it (`<sm-update-prompt>` posts SKIP_WAITING);
// the first one controls the open page at once.
self.addEventListener('message', (event) => {
  if ((event.data as { type?: string } | null)?.type === 'SKIP_WAITING') void self.skipWaiting();
});
clientsClaim();
