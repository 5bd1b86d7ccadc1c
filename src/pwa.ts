// Service worker registration (vite-plugin-pwa's generated Workbox worker): registers it, says
// when a new version is waiting or the app first works offline, and applies an update on request.
/// <reference types="vite-plugin-pwa/vanillajs" />
import { registerSW } from 'virtual:pwa-register';

/** How often an open tab asks the server for a new version (on top of every page load). */
const UPDATE_CHECK_MS = 60 * 60 * 1000;
/** If the new version has not taken control by then, reload anyway. */
const RELOAD_FALLBACK_MS = 10_000;

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
      if (!r) return;
      // Not gated on navigator.onLine, which some browsers keep true offline (and others may
      // report false while a server is reachable): offline, the check just fails.
      setInterval(() => {
        if (!r.installing) r.update().catch(() => undefined);
      }, UPDATE_CHECK_MS);
    },
    onRegisterError: (error: unknown) =>
      handlers.onError?.(
        `Offline use is unavailable: the service worker did not register (${String(error)}).`,
      ),
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
