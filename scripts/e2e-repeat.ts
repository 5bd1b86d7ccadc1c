// Runs the end-to-end suite N times in a row (default 20) and stops at the first failure: a step
// that fails one run in ten shows up here, not on someone else's machine. Each run is a fresh
// `vitest run --project e2e` (new builds, new browser, new profiles). Logs of passing tests are
// hidden; a failing run prints everything vitest reports for it.
//
// Usage: npm run test:e2e:repeat [-- <runs> [extra vitest arguments]]
//   e.g. npm run test:e2e:repeat -- 5 test/e2e/app.test.ts
import { spawnSync } from 'node:child_process';

const [countArg, ...extra] = process.argv.slice(2);
const runs = countArg === undefined ? 20 : Number(countArg);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`e2e-repeat: the number of runs must be a whole number ≥ 1, not "${countArg}"`);
  process.exit(2);
}

const started = Date.now();
for (let run = 1; run <= runs; run++) {
  const t0 = Date.now();
  const result = spawnSync(
    'npx',
    ['vitest', 'run', '--project', 'e2e', '--silent=passed-only', ...extra],
    { stdio: 'inherit', shell: process.platform === 'win32' },
  );
  const seconds = Math.round((Date.now() - t0) / 1000);
  if (result.status !== 0) {
    const why = result.error?.message ?? result.signal ?? `exit code ${result.status}`;
    console.error(
      `\ne2e-repeat: run ${run} of ${runs} FAILED after ${seconds} s (${why}); ` +
        `${run - 1} passed in a row before it.`,
    );
    process.exit(result.status || 1);
  }
  console.log(`\ne2e-repeat: run ${run} of ${runs} passed (${seconds} s)`);
}
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
console.log(`\ne2e-repeat: ${runs} of ${runs} runs passed in a row (${minutes} min)`);
