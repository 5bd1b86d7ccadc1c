// Launches Debian's Chromium (not a Playwright download) headless, with a fresh profile and
// no background traffic, so end-to-end tests run offline and see only the app's own requests.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Where Debian's `chromium` package puts the browser; `CHROMIUM_PATH` overrides it. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Headless flags for this offline machine: no sandbox (root), no background traffic. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  // Nothing but the local server resolves: an outside request fails fast (and is still seen).
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM_PATH}. Install it with: apt-get install -y chromium ` +
        '(or set CHROMIUM_PATH).',
    );
  }
  // launch() gives every run a new temporary profile.
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
  });
}
