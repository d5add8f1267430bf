import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'cloud/**/*.test.ts', 'firmware/**/*.test.ts', 'harness/**/*.test.ts', 'tools/**/*.test.ts'],
    pool: 'forks',
    globalSetup: ['test/setup/postgres.ts', 'test/setup/virtual-firmware.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
