// `npm run make:tiny-gguf -- [file]`: writes the tests' tiny random-weight llama model (GGUF v3,
// test/fixtures/tiny-gguf.ts) to a file (default tiny-random-llama.gguf), e.g. to try the
// "In this browser" model kind by hand. It says nothing sensible: its weights are random.
import { writeFile } from 'node:fs/promises';
import { makeTinyGguf } from '../test/fixtures/tiny-gguf';

const file = process.argv[2] ?? 'tiny-random-llama.gguf';
const bytes = makeTinyGguf();
await writeFile(file, bytes);
console.log(`${file}: ${bytes.length} bytes`);
