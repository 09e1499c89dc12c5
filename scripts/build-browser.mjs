/**
 * Bundles the browser client (`src/browser/index.ts` -> `dist/browser/voxpipe.js`)
 * and its AudioWorklet (`src/browser/pcm-worklet.ts` -> `dist/browser/pcm-worklet.js`)
 * with esbuild: ESM, platform browser, so a Node built-in anywhere in the
 * import graph fails the build instead of the page.
 *
 * Size budget: the browser entry bundles only the browser path (the
 * machine, the tolerant reader, the codec, the player). Each bundle's
 * gzipped size is printed, with a warning when one exceeds its budget or
 * carries a package or module the browser must not (`FORBIDDEN_PACKAGES`,
 * `FORBIDDEN_MODULES`: the schema library, for one; the client reads frames
 * through protocol/wire.ts, never the zod schemas of protocol/codec.ts and
 * protocol/events.ts). The build never fails on them: `npm install` runs it
 * (`prepare`), and a budget must not stop a user's installation. `--check`
 * exits 1 on them instead; `npm test` holds the budget
 * (test/package/browser-bundle.test.ts), and so CI.
 * `node scripts/build-browser.mjs --analyze` prints what pulls what;
 * `--entry FILE --outdir DIR` checks another client entry in another folder.
 */
import { analyzeMetafile, build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';

/**
 * Gzipped bytes allowed per bundle, by entry name. The client's is 33 KiB:
 * it was 30 until the page gained the Node client's rules, each measured
 * (the one driver's early-frame replay and stale guard, about 0.5 KiB; the
 * one heard-text rule with its proportional cut for a segment still
 * arriving, about 0.8 KiB; the reader that finds fields by form and meaning,
 * about 0.9 KiB). What is left is all used (`--analyze`): a smaller bundle
 * means smaller shared code, not a dropped rule.
 */
export const BUDGET_GZIP_BYTES = { voxpipe: 33 * 1024, 'pcm-worklet': 4 * 1024 };
/** Packages that must never reach a browser bundle, and why. */
export const FORBIDDEN_PACKAGES = {
  zod: 'the client imports protocol/wire.ts, not values of protocol/codec.ts or protocol/events.ts',
  eventemitter3: 'BrowserSpeech emits through src/browser/emitter.ts (eventemitter3 is CommonJS: 1.1 KiB gzipped with its interop)',
};
/**
 * Source modules whose code must never reach a browser bundle (the module may
 * sit in the import graph with nothing of it bundled): the encoded-stream
 * probes are for the Node ledger's layout check (`AudioLedger`); the browser
 * session keeps a `SpliceLedger` and takes the layout from `ready`.
 */
export const FORBIDDEN_MODULES = ['src/protocol/audio-probe.ts'];
export const ENTRY_POINTS = { voxpipe: 'src/browser/index.ts', 'pcm-worklet': 'src/browser/pcm-worklet.ts' };

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Bundle `entryPoints` into `outdir` (relative to the package root) as the published bundle is built. */
export async function bundleBrowser({ entryPoints = ENTRY_POINTS, outdir = 'dist/browser' } = {}) {
  return build({
    absWorkingDir: ROOT,
    entryPoints,
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: true,
    metafile: true,
    logLevel: 'warning',
  });
}

/**
 * Measure each `.js` output of a build and hold it to its budget.
 * Returns one row per bundle and the problems (empty when within budget).
 */
export function checkBundles(metafile, budgets = BUDGET_GZIP_BYTES) {
  const rows = [];
  const problems = [];
  for (const [file, { bytes, inputs }] of Object.entries(metafile.outputs)) {
    if (!file.endsWith('.js')) continue;
    const name = file.replace(/^.*\//, '').replace(/\.js$/, '');
    const gzip = gzipSync(readFileSync(join(ROOT, file)), { level: 9 }).byteLength;
    const budget = budgets[name];
    rows.push({ file, bytes, gzip, budget });
    if (budget === undefined) problems.push(`${file} has no size budget in scripts/build-browser.mjs`);
    else if (gzip > budget) problems.push(`${file} is ${gzip} bytes gzipped, over its budget of ${budget}`);
    for (const module of FORBIDDEN_MODULES) {
      if ((inputs[module]?.bytesInOutput ?? 0) > 0) problems.push(`${file} carries ${module} (${inputs[module].bytesInOutput} bytes): the browser path must not reach it`);
    }
    for (const [pkg, why] of Object.entries(FORBIDDEN_PACKAGES)) {
      const carried = Object.keys(inputs).filter((input) => input.includes(`node_modules/${pkg}/`));
      if (carried.length > 0) problems.push(`${file} carries ${pkg} (${carried.length} modules, e.g. ${carried[0]}): ${why}`);
    }
  }
  return { rows, problems };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { analyze: { type: 'boolean' }, check: { type: 'boolean' }, entry: { type: 'string' }, outdir: { type: 'string' } } });
  const entryPoints = values.entry === undefined ? ENTRY_POINTS : { ...ENTRY_POINTS, voxpipe: values.entry };
  const result = await bundleBrowser({ entryPoints, ...(values.outdir === undefined ? {} : { outdir: values.outdir }) });
  const { rows, problems } = checkBundles(result.metafile);
  for (const { file, bytes, gzip, budget } of rows) {
    const limit = budget === undefined ? '' : ` (budget ${(budget / 1024).toFixed(0)} KiB)`;
    console.log(`${file}: ${(bytes / 1024).toFixed(1)} KiB minified, ${(gzip / 1024).toFixed(1)} KiB gzipped${limit}`);
  }
  if (values.analyze) console.log(await analyzeMetafile(result.metafile));
  if (problems.length > 0) {
    const consequence = values.check ? '' : '\n(the build goes on; npm test fails on this)';
    console.error(`browser bundle over budget:\n  ${problems.join('\n  ')}\n(node scripts/build-browser.mjs --analyze shows what pulls what)${consequence}`);
    if (values.check) process.exitCode = 1;
  }
}
