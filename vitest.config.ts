import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start real servers on port 0; two cores on CI.
    pool: 'forks',
    testTimeout: 30_000, // 30 s: espeak warm-up and ffmpeg on a slow CI machine
    hookTimeout: 30_000,
  },
});
