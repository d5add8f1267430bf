// The tests `npm run test:mutation` (StrykerJS, stryker.config.mjs) runs against each mutant: the
// fast Node tests of the modules in the mutation set, listed in stryker.config.mjs (MUTATION_TESTS).
// No PostgreSQL server is started for a mutation run. docs/mutation-testing.md says why and how.
import { defineConfig } from 'vitest/config';
import { MUTATION_TESTS } from './stryker.config.mjs';

export default defineConfig({
  test: {
    include: MUTATION_TESTS,
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
