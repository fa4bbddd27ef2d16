import { availableParallelism } from 'node:os'
import path from 'node:path'
import { defineConfig } from 'vitest/config'

const root = import.meta.dirname

/** End-to-end files that need one engine, or none and so run once. */
const DOCKER_ONLY = ['attach', 'auth', 'codex-hooks', 'codex-profile', 'kubernetes']
const PODMAN_ONLY = ['kube-play']

/** The end-to-end project of one engine, without the files of the other's alone. */
function e2e(engine: 'docker' | 'podman', others: readonly string[]) {
  return {
    extends: true,
    test: {
      name: `e2e-${engine}`,
      include: ['test/e2e/**/*.e2e.test.ts'],
      exclude: others.map((name) => `test/e2e/${name}.e2e.test.ts`),
      env: { OMH_TEST_ENGINES: engine },
      globalSetup: ['test/e2e/setup.ts'],
      testTimeout: 600_000,
      hookTimeout: 900_000,
      fileParallelism: false,
      sequence: { concurrent: false },
    },
  }
}

export default defineConfig({
  resolve: {
    // Workspace packages are tested from source; the CLI under test runs from dist.
    alias: [
      { find: /^@omh\/plugin-api$/, replacement: path.join(root, 'packages/plugin-api/src/index.ts') },
      { find: /^@omh\/plugin-kit$/, replacement: path.join(root, 'packages/plugin-kit/src/index.ts') },
      { find: /^@omh\/plugin-kit\/toml$/, replacement: path.join(root, 'packages/plugin-kit/src/toml.ts') },
      { find: /^@omh\/plugin-kit\/testing$/, replacement: path.join(root, 'packages/plugin-kit/src/testing/index.ts') },
      { find: /^@omh\/kernel$/, replacement: path.join(root, 'packages/kernel/src/index.ts') },
      { find: /^@omh\/kernel\/locations$/, replacement: path.join(root, 'packages/kernel/src/locations.ts') },
      { find: /^@omh\/image$/, replacement: path.join(root, 'packages/image/src/index.ts') },
      { find: /^@omh\/doctor$/, replacement: path.join(root, 'packages/doctor/src/index.ts') },
      { find: /^@omh\/sandbox\/parts$/, replacement: path.join(root, 'packages/sandbox/src/parts.ts') },
      { find: /^@omh\/sandbox$/, replacement: path.join(root, 'packages/sandbox/src/index.ts') },
      { find: /^@omh\/sandbox\/kept$/, replacement: path.join(root, 'packages/sandbox/src/session/kept.ts') },
      { find: /^@omh\/test-utils$/, replacement: path.join(root, 'packages/test-utils/src/index.ts') },
      { find: /^@omh\/fast-path$/, replacement: path.join(root, 'packages/fast-path/src/index.ts') },
      { find: /^@omh\/sandbox\/state$/, replacement: path.join(root, 'packages/sandbox/src/state.ts') },
      { find: /^@omh\/container-cli$/, replacement: path.join(root, 'packages/container-cli/src/index.ts') },
    ],
  },
  test: {
    // Two at the least, whatever the core count: most files wait on git, a child omh or an engine
    // far more than on the processor. (The engines' end-to-end projects, whose files go one at a
    // time, share vitest's one such worker: scripts/test.js gives each a run of its own.)
    maxWorkers: Math.max(2, availableParallelism() - 1),
    disableConsoleIntercept: true,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'test/unit/**/*.test.ts'],
          // Many run git a dozen times: on two cores beside the engines' lane, five seconds is not a bound on them.
          testTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: { name: 'cli', include: ['test/commands/**/*.test.ts'], testTimeout: 60_000 },
      },
      {
        // Generated hostile files, run through the kernel and the commands in one
        // process (test/fuzz/driver.ts); the renderer plugins load from their builds.
        extends: true,
        test: { name: 'fuzz', include: ['test/fuzz/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 60_000 },
      },
      // Real Docker and Podman and real harness binaries: a project per engine,
      // files one after another within each; `npm test` runs the two side by
      // side (scripts/test.js). Image builds take minutes the first time.
      e2e('docker', PODMAN_ONLY),
      e2e('podman', DOCKER_ONLY),
    ],
  },
})
