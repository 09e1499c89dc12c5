import { randomBytes } from 'node:crypto';
import { defineConfig } from 'vitest/config';

/**
 * The client's integration suites against the reference server in each of
 * its dialects (src/server/dialect.ts): where the spec leaves a point open,
 * a real deployment may take it the other way, so the client is tested
 * against more than our own choices. The `reference` project runs every
 * test; the others re-run the client suites with VOXPIPE_DIALECT set (every
 * server those tests start takes it, unless a test pins a dialect).
 */
const CLIENT_SUITES = [
  'test/stream/**/*.test.ts',
  'test/realtime/**/*.test.ts',
  'test/hostile/**/*.test.ts',
  'test/discovery/**/*.test.ts',
  'test/http/**/*.test.ts',
  'test/integrations/**/*.test.ts',
  'test/cli/say.test.ts',
  'test/cli/jobs.test.ts',
];

/**
 * Drawn dialects (`random:SEED`, src/server/dialect-random.ts):
 * every run draws new deployments, so the suite explores the space of legal
 * ones instead of three points in it. The seeds are new each run unless
 * `VOXPIPE_DIALECT_SEEDS=a,b,c` pins them (to replay a failure: the project
 * name `dialect-random-<seed>` in the failure says which). They are put in
 * the environment once, so every evaluation of this file in the run and
 * every worker agrees on them.
 */
const DRAWN_DIALECTS = 3;
process.env['VOXPIPE_DIALECT_SEEDS'] ||= Array.from({ length: DRAWN_DIALECTS }, () => randomBytes(4).toString('hex')).join(',');
const SEEDS = process.env['VOXPIPE_DIALECT_SEEDS'].split(',').filter(Boolean);
/**
 * To see which point breaks what: `VOXPIPE_DIALECT_OFF=capabilities,rate`
 * keeps those points ours in the drawn projects, `VOXPIPE_DIALECT_ONLY=rate`
 * draws those alone (points: src/server/dialect-random.ts).
 */
const OFF = process.env['VOXPIPE_DIALECT_ONLY'] ? `:only=${process.env['VOXPIPE_DIALECT_ONLY']}` : process.env['VOXPIPE_DIALECT_OFF'] ? `:off=${process.env['VOXPIPE_DIALECT_OFF']}` : '';

/**
 * What runs against each drawn dialect: a focused subset of the client
 * suites, so three more projects keep the whole suite within CI's time (the
 * CLI's say, the reliable session's resume scenarios, failover, the HTTP
 * transports, discovery). The property test (test/dialect/) draws its own.
 */
const DRAWN_SUITES = [
  'test/cli/say.test.ts',
  'test/realtime/reliable-session.test.ts',
  'test/stream/failover.test.ts',
  'test/stream/transports/http-transports.test.ts',
  'test/discovery/**/*.test.ts',
];

/**
 * Left out of the drawn projects: the mp3 cases (the pure-JS encoder is the
 * slowest thing in these suites, 9 to 11 s each on CI, more at 44.1 and
 * 48 kHz); the reference and preset projects run them.
 */
const DRAWN_SKIP = /^(?!.*\bmp3\b)/;

/**
 * The CLI's embedded server keeps state in the user's data directory by
 * default; a CLI process a test spawns keeps nothing unless the test gives
 * it a data directory of its own (test/cli/persistence.test.ts).
 */
const EPHEMERAL = { VOXPIPE_EPHEMERAL: '1' };

export default defineConfig({
  test: {
    // Integration tests start real servers on port 0; two cores on CI.
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: one on CI's two.
    // Most files wait on sockets and timers, not the CPU, so two run side
    // by side.
    maxWorkers: 2,
    // Fails a test file that writes an API key to its output.
    setupFiles: ['test/setup/secret-scan.ts'],
    testTimeout: 30_000, // 30 s: espeak warm-up and ffmpeg on a slow CI machine
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'reference', include: ['test/**/*.test.ts'], env: { VOXPIPE_DIALECT: 'reference', ...EPHEMERAL } } },
      ...['alt', 'minimal'].map((dialect) => ({ extends: true, test: { name: `dialect-${dialect}`, include: CLIENT_SUITES, env: { VOXPIPE_DIALECT: dialect, ...EPHEMERAL } } })),
      ...SEEDS.map((seed) => ({ extends: true, test: { name: `dialect-random-${seed}`, include: DRAWN_SUITES, testNamePattern: DRAWN_SKIP, setupFiles: ['test/setup/secret-scan.ts', 'test/setup/dialect-draw.ts'], env: { VOXPIPE_DIALECT: `random:${seed}${OFF}`, ...EPHEMERAL } } })),
    ],
  },
});
