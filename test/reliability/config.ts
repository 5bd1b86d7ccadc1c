// Seed, run counts and limits of the reliability suite (issue 10), read from the environment, and
// `check()`, through which every property of the suite runs, so that a failure prints the line
// that reproduces it. `npm test` runs a short, fixed seed; `npm run test:reliability` a long run.
//
//   RELIABILITY_SEED   base seed (whole number); each property derives its own from it and its name
//   RELIABILITY_RUNS   runs of each property (Chromium ones run a tenth of it, at least their
//                      short count); unset: the short counts of `npm test`
//   RELIABILITY_PATH   with RELIABILITY_SEED and `-t <property>`: replays one failing run
import fc from 'fast-check';

function envInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new Error(`${name} must be a whole number ≥ 0, not "${raw}"`);
  }
  return n;
}

/** The base seed; `npm test` always uses the same one. */
export const SEED = envInt('RELIABILITY_SEED') ?? 20_251_123;
const RUNS = envInt('RELIABILITY_RUNS');
const PATH = process.env.RELIABILITY_PATH || undefined;

/** True in a long run (`npm run test:reliability`, or RELIABILITY_RUNS set). */
export const LONG = RUNS !== undefined;

/**
 * No case may take longer than this: past it the case counts as a hang. Generous, since this
 * machine is slow and shared; it bounds a hang, it does not time anything.
 */
export const HANG_MS = 30_000;

export type Cost = 'node' | 'browser';

/** Runs of one property: `short` in `npm test`; RELIABILITY_RUNS (a tenth in Chromium) in a long run. */
export function runCount(short: number, cost: Cost = 'node'): number {
  if (RUNS === undefined) return short;
  return Math.max(short, cost === 'browser' ? Math.ceil(RUNS / 10) : RUNS);
}

/** A vitest time limit for a test that runs `runs` cases of at most `perCaseMs` each. */
export function testTimeout(runs: number, perCaseMs = HANG_MS): number {
  return 60_000 + runs * perCaseMs;
}

/** The seed of one property: the base seed mixed with the property's name (FNV-1a). */
export function seedFor(name: string): number {
  let h = 0x811c9dc5 ^ SEED;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** The command that runs this property again with the same seed and count. */
export function reproduce(name: string, runs: number): string {
  const env = `RELIABILITY_SEED=${SEED} RELIABILITY_RUNS=${runs}`;
  return `${env} npx vitest run --project reliability -t ${JSON.stringify(name)}`;
}

export interface CheckOptions {
  runs: number;
  /**
   * Shrink a failure to a smaller input (default true). Off for Chromium cases, where every
   * attempt costs seconds and the printed seed already reproduces the failure.
   */
  shrink?: boolean;
}

/**
 * Runs a property with its derived seed; on failure throws fast-check's report (the
 * counterexample, its seed and path) after the command that reproduces it.
 */
export async function check<Ts>(
  name: string,
  property: fc.IAsyncPropertyWithHooks<Ts> | fc.IPropertyWithHooks<Ts>,
  options: CheckOptions,
): Promise<void> {
  const runs = options.runs;
  const details = await fc.check(property as fc.IAsyncProperty<Ts>, {
    seed: seedFor(name),
    numRuns: runs,
    endOnFailure: options.shrink === false,
    ...(PATH ? { path: PATH } : {}),
  });
  if (details.failed) {
    const report = fc.defaultReportMessage(details) ?? 'failed';
    throw new Error(
      `Reliability case "${name}" failed. Reproduce it with:\n  ${reproduce(name, runs)}\n` +
        `(add RELIABILITY_PATH="${details.counterexamplePath ?? ''}" to replay only the failing run)\n\n` +
        `${report}\n\nThe failing run's error: ${errorText(details.errorInstance)}`,
    );
  }
}

function errorText(e: unknown): string {
  if (e instanceof Error) return e.stack ?? `${e.name}: ${e.message}`;
  return String(e);
}

/** Resolves as `promise` does, or rejects once `ms` pass without an answer (a hang). */
export function within<T>(promise: Promise<T>, what: string, ms = HANG_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not finish within ${ms / 1000} s (a hang)`)),
      ms,
    );
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/**
 * Errors thrown or rejected outside any awaited promise while `run` goes (node). Vitest would
 * report them too, but only at the end and without the case that caused them.
 */
export async function uncaughtDuring<T>(run: () => Promise<T>): Promise<[T, unknown[]]> {
  const seen: unknown[] = [];
  const onError = (e: unknown) => seen.push(e);
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  try {
    const value = await run();
    // Let rejections of this case's last microtasks surface before looking.
    await new Promise((resolve) => setImmediate(resolve));
    return [value, seen];
  } finally {
    process.off('uncaughtException', onError);
    process.off('unhandledRejection', onError);
  }
}

/** Counts of what the cases ran into, printed after a property so a run shows what it covered. */
export class Tally {
  private readonly counts = new Map<string, number>();

  add(what: string): void {
    this.counts.set(what, (this.counts.get(what) ?? 0) + 1);
  }

  print(name: string): void {
    const parts = [...this.counts].sort(([a], [b]) => a.localeCompare(b));
    console.info(`${name} (seed ${SEED}): ${parts.map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  }
}
