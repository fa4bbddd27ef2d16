import js from '@eslint/js'
import tseslint from 'typescript-eslint'

// Test tools are peer dependencies of the kit's testing entry, installed by
// plugin authors for their tests: production code that imported them would
// fail where only omh is installed.
const testOnly = {
  group: ['vitest', 'vitest/*', 'fast-check', '@omh/plugin-kit/testing'],
  message: 'Tests only: production code never loads the test kit, vitest or fast-check.',
}

/** One lint block per floor: the packages it may not import. */
const floors = (forbidden) =>
  Object.entries(forbidden).map(([files, group]) => ({
    files: [files],
    ignores: ['**/*.test.ts', ...(files.startsWith('packages/plugin-kit/') ? ['packages/plugin-kit/src/testing/**'] : [])],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group, message: 'This floor may not import that package: see docs/ARCHITECTURE.md (the floors).' }, testOnly] },
      ],
    },
  }))

export default tseslint.config(
  // examples/profile holds no code; as the README's OMH_HOME it also holds session worktrees, copies of this repository.
  { ignores: ['**/dist/**', '**/node_modules/**', 'oclif.manifest.json', '**/fixtures/**', '**/cases/**', '**/golden/**', 'examples/profile/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    // @oclif/core's package entry checks the Node version with semver on every start, about 15 ms;
    // src/lib/oclif.ts takes oclif's parts from their own modules instead.
    files: ['src/**/*.ts'],
    ignores: ['src/lib/oclif.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: '@oclif/core', message: "Import oclif's parts from src/lib/oclif.ts." }], patterns: [testOnly] },
      ],
    },
  },
  // The floors: arrows point down only. CLI → doctor → sandbox → image → kernel → plugin-kit → plugin-api;
  // renderers → plugin-kit, plugin-api; runtimes → container-cli → plugin-api. The fast path stands
  // beside the CLI, on the sandbox's and the kernel's leaf modules alone (it is bundled whole).
  ...floors({
    'packages/plugin-api/src/**': ['@omh/*', 'tapable', 'cosmiconfig', 'smol-toml', 'execa'],
    'packages/plugin-kit/src/**': ['@omh/kernel', '@omh/image', '@omh/sandbox', '@omh/doctor', '@omh/fast-path', '@omh/container-cli', '@omh/renderer-*', '@omh/runtime-*'],
    'packages/kernel/src/**': ['@omh/image', '@omh/sandbox', '@omh/doctor', '@omh/fast-path', '@omh/container-cli', '@omh/renderer-*', '@omh/runtime-*'],
    'packages/image/src/**': ['@omh/sandbox', '@omh/doctor', '@omh/fast-path', '@omh/container-cli', '@omh/renderer-*', '@omh/runtime-*'],
    'packages/sandbox/src/**': ['@omh/doctor', '@omh/fast-path', '@omh/container-cli', '@omh/renderer-*', '@omh/runtime-*'],
    'packages/doctor/src/**': ['@omh/fast-path', '@omh/container-cli', '@omh/renderer-*', '@omh/runtime-*'],
    'packages/renderer-*/src/**': ['@omh/kernel', '@omh/sandbox', '@omh/container-cli', '@omh/renderer-*', '@omh/runtime-*'],
    'packages/container-cli/src/**': ['@omh/kernel', '@omh/sandbox', '@omh/renderer-*', '@omh/runtime-*'],
    'packages/runtime-*/src/**': ['@omh/kernel', '@omh/sandbox', '@omh/renderer-*', '@omh/runtime-*'],
  }),
  {
    // The fast path is bundled whole into the file every run starts with: omh's leaf modules only.
    files: ['packages/fast-path/src/**'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^@omh/(?!kernel/locations$|sandbox/(?:kept|claim|watch-files|idle-due)$)', message: 'The fast path loads no more of omh than it needs to decide: see docs/ARCHITECTURE.md (the floors).' }, testOnly] },
      ],
    },
  },
  {
    // The test kit itself: plugin-kit's floor, and the test tools it is made of.
    files: ['packages/plugin-kit/src/testing/**'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@omh/kernel', '@omh/sandbox', '@omh/container-cli', '@omh/renderer-*', '@omh/runtime-*'],
              message: 'This floor may not import that package: see docs/ARCHITECTURE.md (the floors).',
            },
          ],
        },
      ],
    },
  },
)
