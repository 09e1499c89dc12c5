/**
 * Bundles the browser client (`src/browser/index.ts` -> `dist/browser/voxpipe.js`)
 * and its AudioWorklet (`src/browser/pcm-worklet.ts` -> `dist/browser/pcm-worklet.js`)
 * with esbuild: ESM, platform browser, so a Node built-in anywhere in the
 * import graph fails the build instead of the page.
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const result = await build({
  absWorkingDir: root,
  entryPoints: { voxpipe: 'src/browser/index.ts', 'pcm-worklet': 'src/browser/pcm-worklet.ts' },
  outdir: 'dist/browser',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  metafile: true,
  logLevel: 'warning',
});
for (const [file, { bytes }] of Object.entries(result.metafile.outputs)) {
  if (file.endsWith('.js')) console.log(`${file}: ${(bytes / 1024).toFixed(1)} KiB`);
}
