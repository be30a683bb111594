import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 300_000,
    // Container tests share one engine on a 2-core machine: keep the parallelism modest.
    maxWorkers: 2,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
