// Service worker registration (workers/sw.ts, built by vite-plugin-pwa): registers it, says when a
// new version is waiting or the app first works offline, and applies an update on request. On a
// first visit the page waits for it before starting the memory worker, and reloads once to become
// cross-origin isolated where the host sends no COOP/COEP headers (docs/hosting.md).
/// <reference types="vite-plugin-pwa/vanillajs" />
import { registerSW } from 'virtual:pwa-register';

/** How often an open tab asks the server for a new version (on top of every page load). */
const UPDATE_CHECK_MS = 60 * 60 * 1000;
/** If the new version has not taken control by then, reload anyway. */
const RELOAD_FALLBACK_MS = 10_000;
/** A first visit waits this long at most for the service worker before starting the app. */
const FIRST_CONTROL_LIMIT_MS = 15_000;
/** Set (per tab) before the one reload that makes the page isolated, so it cannot loop. */
const ISOLATION_RELOAD_KEY = 'structured-memory:isolation-reload';

let resolveStart: () => void = () => undefined;
const appMayStart = new Promise<void>((resolve) => (resolveStart = resolve));
let appStarted = false;
function startApp(): void {
  appStarted = true;
  resolveStart();
}

function sessionFlag(op: 'get' | 'set' | 'remove'): boolean {
  try {
    if (op === 'get') return sessionStorage.getItem(ISOLATION_RELOAD_KEY) !== null;
    if (op === 'set') sessionStorage.setItem(ISOLATION_RELOAD_KEY, String(Date.now()));
    else sessionStorage.removeItem(ISOLATION_RELOAD_KEY);
    return true;
  } catch {
    return false; // storage refused: no guard, so no reload
  }
}

/**
 * Resolves when the app may start its memory worker. At once when a service worker already
 * controls the page (its fetches of the model and the ONNX runtime go through the worker's cache)
 * or none can (the dev server, file://, plain http, a browser without them, a failed
 * registration). On a first visit, once the service worker has taken control (at most
 * FIRST_CONTROL_LIMIT_MS): then, if the page is not cross-origin isolated, it reloads instead,
 * once per tab, so the service worker's headers isolate it (docs/hosting.md).
 */
export function whenAppMayStart(): Promise<void> {
  const container = 'serviceWorker' in navigator ? navigator.serviceWorker : undefined;
  // The dev server (import.meta.hot; not env.DEV, which a build under Vitest also sets) and a
  // file opened from disk have no service worker.
  const none = import.meta.hot || location.protocol === 'file:';
  if (none || !container || !window.isSecureContext) return Promise.resolve();
  if (container.controller) {
    if (crossOriginIsolated) sessionFlag('remove');
    return Promise.resolve();
  }
  container.addEventListener(
    'controllerchange',
    () => {
      // Not once the app runs (control came after the time limit): a reload would interrupt it.
      if (!appStarted && !crossOriginIsolated && !sessionFlag('get') && sessionFlag('set')) {
        window.location.reload();
        return;
      }
      startApp();
    },
    { once: true },
  );
  setTimeout(startApp, FIRST_CONTROL_LIMIT_MS);
  return appMayStart;
}

export interface PwaHandlers {
  /** A new version is installed and waits for `update()`. */
  onNeedRefresh(): void;
  /** The first version is installed: the app now works offline. */
  onOfflineReady?(): void;
  /** The service worker could not be registered (a sentence). */
  onError?(message: string): void;
}

export interface PwaRegistration {
  /** Activates the waiting version; the page reloads once it is in control. */
  update(): Promise<void>;
}

/**
 * Registers the app's service worker. In the dev server (no service worker there) and in
 * browsers without service workers this does nothing and `update()` just reloads.
 */
export function registerServiceWorker(handlers: PwaHandlers): PwaRegistration {
  let registration: ServiceWorkerRegistration | undefined;
  let requested = false;
  const reload = () => window.location.reload();

  const updateSW = registerSW({
    onNeedRefresh: () => handlers.onNeedRefresh(),
    onOfflineReady: () => handlers.onOfflineReady?.(),
    // The new version took control. Reload if this tab asked for it; a tab where the update
    // was accepted elsewhere keeps its page (a reply may be streaming) and keeps offering it.
    onNeedReload: () => (requested ? reload() : handlers.onNeedRefresh()),
    onRegisteredSW: (_url, r) => {
      registration = r;
      // Active already but not in control (a reload that bypassed it): no takeover will come.
      if (!r || (r.active && !navigator.serviceWorker.controller)) startApp();
      if (!r) return;
      // Not gated on navigator.onLine, which some browsers keep true offline (and others may
      // report false while a server is reachable): offline, the check just fails.
      setInterval(() => {
        if (!r.installing) r.update().catch(() => undefined);
      }, UPDATE_CHECK_MS);
    },
    onRegisterError: (error: unknown) => {
      startApp();
      // The browser's own reason is technical (a blocked registration can surface as a
      // TypeError inside workbox-window); the banner says what it means for the person.
      console.warn('Service worker registration failed:', error);
      handlers.onError?.(
        'Offline use is unavailable: this browser did not let the app install its service ' +
          'worker (private windows and some privacy settings block them). Everything else ' +
          'works while the app is online.',
      );
    },
  });

  return {
    async update() {
      requested = true;
      // Already in control (accepted in another tab), or no service worker at all.
      if (!registration?.waiting) return reload();
      setTimeout(reload, RELOAD_FALLBACK_MS);
      await updateSW(true);
    },
  };
}
