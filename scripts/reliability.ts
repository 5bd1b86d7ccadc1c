// The long run of the reliability suite (test/reliability/): every property with many runs, from
// a new random seed each time unless RELIABILITY_SEED is set. The seed and run count are printed
// first, and a failure prints the command that reproduces it.
//
// Usage: npm run test:reliability [-- extra vitest arguments]
//   RELIABILITY_RUNS=1000 RELIABILITY_SEED=42 npm run test:reliability -- test/reliability/imports.test.ts
import { spawnSync } from 'node:child_process';

const env = { ...process.env };
env.RELIABILITY_RUNS ||= '200';
env.RELIABILITY_SEED ||= String(Math.floor(Math.random() * 2 ** 31));
console.log(
  `reliability: RELIABILITY_SEED=${env.RELIABILITY_SEED} RELIABILITY_RUNS=${env.RELIABILITY_RUNS}` +
    ' (Chromium cases run a tenth as many)',
);
const started = Date.now();
const result = spawnSync(
  'npx',
  ['vitest', 'run', '--project', 'reliability', ...process.argv.slice(2)],
  {
    stdio: 'inherit',
    env,
    shell: process.platform === 'win32',
  },
);
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
const verdict = result.status === 0 ? 'passed' : 'FAILED';
console.log(
  `\nreliability: ${verdict} in ${minutes} min; to run it again: ` +
    `RELIABILITY_SEED=${env.RELIABILITY_SEED} RELIABILITY_RUNS=${env.RELIABILITY_RUNS} npm run test:reliability`,
);
process.exit(result.status ?? 1);
