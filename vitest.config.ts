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
 * The CLI's embedded server keeps state in the user's data directory by
 * default; a CLI process a test spawns keeps nothing unless the test gives
 * it a data directory of its own (test/cli/persistence.test.ts).
 */
const EPHEMERAL = { VOXPIPE_EPHEMERAL: '1' };

export default defineConfig({
  test: {
    // Integration tests start real servers on port 0; two cores on CI.
    pool: 'forks',
    // Fails a test file that writes an API key to its output (issue 14).
    setupFiles: ['test/setup/secret-scan.ts'],
    testTimeout: 30_000, // 30 s: espeak warm-up and ffmpeg on a slow CI machine
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'reference', include: ['test/**/*.test.ts'], env: { VOXPIPE_DIALECT: 'reference', ...EPHEMERAL } } },
      ...['alt', 'minimal'].map((dialect) => ({ extends: true, test: { name: `dialect-${dialect}`, include: CLIENT_SUITES, env: { VOXPIPE_DIALECT: dialect, ...EPHEMERAL } } })),
    ],
  },
});
