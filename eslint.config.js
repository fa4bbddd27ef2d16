import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'oclif.manifest.json', '**/fixtures/**', '**/cases/**'] },
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
      'no-restricted-imports': ['error', { paths: [{ name: '@oclif/core', message: "Import oclif's parts from src/lib/oclif.ts." }] }],
    },
  },
)
