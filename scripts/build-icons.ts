// Renders the PWA's PNG icons from public/icon.svg (the one source of the artwork) with sharp:
// the manifest's 192 and 512 "any" icons, a 512 "maskable" icon (full-bleed background, glyph
// shrunk into the safe zone) and the 180 px apple-touch-icon that iOS looks for at the root.
//
// Usage: npm run build:icons   (writes public/*.png; commit them)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

const PUBLIC = fileURLToPath(new URL('../public/', import.meta.url));
/** The source artwork's viewBox is 0 0 64 64. */
const VIEW = 64;

interface IconSpec {
  file: string;
  size: number;
  /** `any`: the artwork as drawn (rounded square); `full`: square background, glyph scaled. */
  shape: 'any' | 'full';
  /** Glyph scale for `full` icons (1 = as drawn). */
  glyphScale?: number;
}

/** The file names are also in vite.config.ts (manifest icons) and test/e2e/pwa.test.ts. */
const ICONS: readonly IconSpec[] = [
  { file: 'pwa-192x192.png', size: 192, shape: 'any' },
  { file: 'pwa-512x512.png', size: 512, shape: 'any' },
  // Maskable: the platform crops to any shape inside the central circle of radius 40%; the
  // glyph (about 37 of 64 units wide) is scaled to sit well inside it.
  { file: 'maskable-512x512.png', size: 512, shape: 'full', glyphScale: 0.78 },
  // iOS rounds the corners itself and shows transparency as black: a full square.
  { file: 'apple-touch-icon.png', size: 180, shape: 'full', glyphScale: 0.9 },
];

interface Artwork {
  background: string;
  /** Everything but the background rect. */
  glyph: string;
  /** Centre of the glyph's bounding box, in viewBox units. */
  centre: { x: number; y: number };
}

function parseArtwork(svg: string): Artwork {
  const rect = /<rect\b[^>]*\bfill="(#[0-9a-fA-F]{3,8})"[^>]*\/>/.exec(svg);
  if (!rect) throw new Error('public/icon.svg: expected a background <rect … fill="#…"/>');
  const inner = /<svg\b[^>]*>([\s\S]*)<\/svg>/.exec(svg);
  if (!inner) throw new Error('public/icon.svg: no <svg> element');
  // The glyph's box (strokes included), measured from the artwork: x 15–48, y 11–48.
  return {
    background: rect[1],
    glyph: inner[1].replace(rect[0], '').trim(),
    centre: { x: 31.5, y: 29.5 },
  };
}

function fullBleedSvg(art: Artwork, scale: number): string {
  const { x, y } = art.centre;
  const half = VIEW / 2;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${VIEW} ${VIEW}">` +
    `<rect width="${VIEW}" height="${VIEW}" fill="${art.background}"/>` +
    `<g transform="translate(${half} ${half}) scale(${scale}) translate(${-x} ${-y})">` +
    `${art.glyph}</g></svg>`
  );
}

async function render(svg: string, size: number): Promise<Buffer> {
  // Rasterise at the target resolution (density is in DPI; the SVG is 64 px at 72 DPI).
  return sharp(Buffer.from(svg), { density: (72 * size) / VIEW })
    .resize(size, size)
    .png({ compressionLevel: 9, adaptiveFiltering: true })
    .toBuffer();
}

async function main(): Promise<void> {
  const source = readFileSync(join(PUBLIC, 'icon.svg'), 'utf8');
  const art = parseArtwork(source);
  for (const icon of ICONS) {
    const svg = icon.shape === 'any' ? source : fullBleedSvg(art, icon.glyphScale ?? 1);
    const png = await render(svg, icon.size);
    const { width, height } = await sharp(png).metadata();
    if (width !== icon.size || height !== icon.size) {
      throw new Error(`${icon.file}: rendered ${width}×${height}, expected ${icon.size}`);
    }
    writeFileSync(join(PUBLIC, icon.file), png);
    console.info(`public/${icon.file}  ${icon.size}×${icon.size}  ${png.length} bytes`);
  }
}

await main();
