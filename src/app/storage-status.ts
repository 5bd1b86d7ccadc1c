// Whether the browser keeps this site's data, how much it uses and has free, and what that means
// in this browser, in plain words (docs/settings.md, "Storage the browser keeps"). A browser
// without the Storage API gets a sentence saying so; nothing here can lose data.

/** What the browser says about this site's storage. */
export interface StorageStatus {
  /** The browser has `navigator.storage.persisted()`. */
  supported: boolean;
  /** Whether it promised to keep the data (undefined: it did not say). */
  persisted: boolean | undefined;
  /** Bytes used by this site (undefined: not reported). */
  usage: number | undefined;
  /** Bytes this site may use in all (undefined: not reported). */
  quota: number | undefined;
}

export const UNKNOWN_STORAGE: StorageStatus = {
  supported: false,
  persisted: undefined,
  usage: undefined,
  quota: undefined,
};

type StorageApi = Pick<StorageManager, 'persisted' | 'persist' | 'estimate'>;

/** The Storage API of this page, when it has one (file:// and old browsers may not). */
export function storageApi(
  nav: Navigator | undefined = globalThis.navigator,
): StorageApi | undefined {
  const s = nav?.storage as Partial<StorageApi> | undefined;
  return s && typeof s.persisted === 'function' ? (s as StorageApi) : undefined;
}

/** Reads what the browser says now; each question that fails is left unanswered. */
export async function readStorageStatus(api = storageApi()): Promise<StorageStatus> {
  if (!api) return UNKNOWN_STORAGE;
  const [persisted, estimate] = await Promise.all([
    api.persisted().catch(() => undefined),
    typeof api.estimate === 'function' ? api.estimate().catch(() => undefined) : undefined,
  ]);
  return { supported: true, persisted, usage: estimate?.usage, quota: estimate?.quota };
}

export type BrowserFamily = 'safari' | 'firefox' | 'chromium' | 'other';

/** The browser family, for the advice only (never to decide what code runs). */
export function browserFamily(userAgent: string, brands: readonly string[] = []): BrowserFamily {
  if (brands.some((b) => /Chromium|Google Chrome|Microsoft Edge/.test(b))) return 'chromium';
  if (/Firefox\//.test(userAgent)) return 'firefox';
  if (/Chrome\/|Chromium\/|Edg\//.test(userAgent)) return 'chromium';
  if (/AppleWebKit\//.test(userAgent) && /Safari\//.test(userAgent)) return 'safari';
  return 'other';
}

/** What Settings → Data says about storage: one line of status, and advice when not kept. */
export interface StorageAdvice {
  status: string;
  advice: string[];
}

/**
 * The words for a storage status. `installed`: the app runs as an installed app (its own
 * window, or from the home screen).
 */
export function storageAdvice(
  s: StorageStatus,
  family: BrowserFamily,
  installed: boolean,
): StorageAdvice {
  const copyElsewhere =
    'Keep a copy elsewhere: turn on Sync, or keep backups (below) in a folder that is itself backed up.';
  if (!s.supported || s.persisted === undefined) {
    return {
      status:
        'This browser does not say whether it keeps memory: it may clear it when space runs low.',
      advice: [copyElsewhere],
    };
  }
  if (s.persisted) {
    return {
      status:
        'Kept: the browser will not clear memory on its own; only you can, by clearing this site’s data.',
      advice: [],
    };
  }
  const advice: string[] = [];
  if (family === 'safari') {
    advice.push(
      installed
        ? 'Safari keeps the data of an app on the Home Screen or in the Dock.'
        : 'Safari deletes the data of a site after 7 days without a visit. Add this app to the Home Screen (iPhone and iPad: Share, then Add to Home Screen) or to the Dock (Mac: File, then Add to Dock), and open it from there.',
    );
  } else if (family === 'firefox') {
    advice.push(
      'Firefox may clear it when the disk is nearly full. Press “Ask the browser to keep it” and choose Allow.',
    );
  } else if (family === 'chromium') {
    advice.push(
      installed
        ? 'The browser may still clear it when the disk is nearly full; it decides by itself and may keep it later.'
        : 'The browser may clear it when the disk is nearly full. It keeps the data of installed apps: install this one (the install icon in the address bar, or Add to Home Screen on a phone), then press “Ask the browser to keep it”.',
    );
  } else {
    advice.push('The browser may clear it when the disk is nearly full.');
  }
  advice.push(copyElsewhere);
  return { status: 'Not kept for sure: the browser may clear memory.', advice };
}

/** Bytes in words: "812 KB", "2.3 MB", "118 GB". */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  if (n < 1000 ** 2) return `${Math.round(n / 1000)} KB`;
  if (n < 1000 ** 3) return `${(n / 1000 ** 2).toFixed(1)} MB`;
  if (n < 1000 ** 4) return `${(n / 1000 ** 3).toFixed(n < 10 * 1000 ** 3 ? 1 : 0)} GB`;
  return `${(n / 1000 ** 4).toFixed(1)} TB`;
}

/** "2.3 MB used, about 118 GB free", or what of it is known. */
export function usageLine(s: StorageStatus): string | undefined {
  if (s.usage === undefined) return undefined;
  const used = `${formatBytes(s.usage)} used`;
  if (s.quota === undefined || s.quota < s.usage) return `${used}.`;
  return `${used}, about ${formatBytes(s.quota - s.usage)} free for this site.`;
}
