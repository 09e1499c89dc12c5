/**
 * The system dependencies some tests need, asked in one place. Every test
 * that needs one is written `describe.skipIf(!has('ffmpeg'))(...)` (or
 * `runIf(has(...))`), never with a lookup of its own.
 *
 * - On a developer's machine a missing dependency is a skip, with its
 *   reason printed once per test file (what is missing, how to get it).
 * - In CI (`CI` set and not `false`), where `.ci/run` installs them all, a
 *   missing dependency throws: the test file fails, naming it, so a suite
 *   never goes green unrun.
 */
import { existsSync } from 'node:fs';
import { espeakAvailable } from '../../src/server/engines/espeak.js';
import { findExecutable } from '../../src/server/media-engines/process.js';
import { detectRecognizer } from '../../src/server/media-engines/tools.js';

/** The PostgreSQL of the store tests; an empty value is no value. */
export const TEST_DATABASE_URL = process.env['VOXPIPE_TEST_DATABASE_URL'] || undefined;

/** Where the browser tests find Chromium: VOXPIPE_CHROMIUM, else Debian's paths. */
export const CHROMIUM_PATH = [process.env['VOXPIPE_CHROMIUM'], '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p): p is string => !!p && existsSync(p));

const ESPEAK = await espeakAvailable();

/** Each dependency: whether it is here, and how to get it. */
const DEPENDENCIES = {
  ffmpeg: { present: () => findExecutable('ffmpeg') !== undefined, get: 'apt-get install ffmpeg' },
  ffprobe: { present: () => findExecutable('ffprobe') !== undefined, get: 'apt-get install ffmpeg' },
  ffplay: { present: () => findExecutable('ffplay') !== undefined, get: 'apt-get install ffmpeg' },
  pocketsphinx: { present: () => detectRecognizer() !== undefined, get: 'apt-get install pocketsphinx pocketsphinx-en-us' },
  espeak: { present: () => ESPEAK, get: 'npm install (the optional dependency @echogarden/espeak-ng-emscripten)' },
  chromium: { present: () => CHROMIUM_PATH !== undefined, get: 'apt-get install chromium, or VOXPIPE_CHROMIUM=/path/to/chrome' },
  postgresql: { present: () => TEST_DATABASE_URL !== undefined, get: 'VOXPIPE_TEST_DATABASE_URL=postgres://user:password@host:port/database (.ci/run sets one up)' },
} as const;

/** A system dependency of the tests. */
export type Dependency = keyof typeof DEPENDENCIES;

/** Whether this run is CI's. */
export const IN_CI = (process.env['CI'] ?? '') !== '' && process.env['CI'] !== 'false' && process.env['CI'] !== '0';

const said = new Set<Dependency>();

/**
 * Whether every one of `deps` is here. A missing one: in CI, an error naming
 * it (the file fails); elsewhere false, with the reason on standard error.
 */
export function has(...deps: Dependency[]): boolean {
  const missing = deps.filter((dep) => !DEPENDENCIES[dep].present());
  if (missing.length === 0) return true;
  const reasons = missing.map((dep) => `${dep} (${DEPENDENCIES[dep].get})`).join(', ');
  if (IN_CI) throw new Error(`missing in CI: ${reasons}; .ci/run installs it, and tests that need it must run`);
  for (const dep of missing) {
    if (said.has(dep)) continue;
    said.add(dep);
    process.stderr.write(`voxpipe tests: skipping what needs ${dep}: not found here; ${DEPENDENCIES[dep].get}\n`);
  }
  return false;
}
