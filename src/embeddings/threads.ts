// How many threads the ONNX runtime may use for embeddings, and why, in words for the settings.
// Threads need SharedArrayBuffer, which browsers give only to a cross-origin isolated page (the
// COOP/COEP headers, from the server or from the app's service worker: docs/hosting.md).

/**
 * Half the device's cores, at most four: the rule onnxruntime-web itself applies, which leaves
 * cores for the page and the memory engine; on the 2-core machine measured, a second thread
 * lowered throughput (bench/README.md, "Threads").
 */
export const MAX_EMBEDDING_THREADS = 4;

export interface ThreadPlan {
  threads: number;
  /** One sentence: how many threads, and why no more. */
  sentence: string;
}

/** What decides the plan; the defaults read the running page or worker. */
export interface ThreadFacts {
  isolated: boolean;
  cores: number;
  /** https or localhost (service workers and isolation need one). */
  secure: boolean;
  /** A service worker controls the page (so a reload would make it isolated). */
  controlled?: boolean;
}

function currentFacts(): ThreadFacts {
  const g = globalThis as {
    crossOriginIsolated?: boolean;
    isSecureContext?: boolean;
    navigator?: { hardwareConcurrency?: number; serviceWorker?: { controller: unknown } };
  };
  return {
    isolated: g.crossOriginIsolated === true,
    cores: Math.max(1, g.navigator?.hardwareConcurrency ?? 1),
    secure: g.isSecureContext !== false,
    controlled: g.navigator?.serviceWorker
      ? g.navigator.serviceWorker.controller !== null
      : undefined,
  };
}

/** The thread count for the ONNX runtime here, and the sentence that explains it. */
export function embeddingThreads(facts: ThreadFacts = currentFacts()): ThreadPlan {
  if (facts.isolated) {
    const threads = Math.max(1, Math.min(MAX_EMBEDDING_THREADS, Math.ceil(facts.cores / 2)));
    const plural = threads === 1 ? 'thread' : 'threads';
    return {
      threads,
      sentence:
        `Embeddings use ${threads} ${plural} (half of this device’s ${facts.cores} cores, at most ` +
        `${MAX_EMBEDDING_THREADS}): this page is cross-origin isolated.`,
    };
  }
  let why: string;
  if (!facts.secure) {
    why =
      'this page is not cross-origin isolated: it is served over plain http from another machine, where browsers allow neither isolation nor a service worker (use https or localhost)';
  } else if (facts.controlled === undefined) {
    why =
      'this page is not cross-origin isolated (the server sends no COOP/COEP headers, and this browser runs no service worker here to add them)';
  } else if (facts.controlled) {
    why =
      'this page is not cross-origin isolated: the browser did not isolate it even with the headers the service worker adds';
  } else {
    why =
      'this page is not cross-origin isolated (the server sends no COOP/COEP headers, and the app’s service worker adds them only from the next load)';
  }
  return { threads: 1, sentence: `Embeddings use 1 thread: ${why}.` };
}
