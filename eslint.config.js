// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layer rule of DESIGN.md: shared/ is pure, renderer/ never reaches into electron/.
const nodeBuiltins = [
  'node:*',
  'fs',
  'path',
  'os',
  'crypto',
  'child_process',
  'http',
  'net',
  'url',
];

export default tseslint.config(
  {
    ignores: ['node_modules/', 'dist/', 'release/', 'test-results/', 'playwright-report/'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: [
            '*.js',
            'bin/*.js',
            'scripts/*.js',
            'test/fixtures/*.js',
            'eslint.config.js',
          ],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
      ],
    },
  },
  {
    files: ['shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                ...nodeBuiltins,
                'electron',
                '../*electron*',
                '../*renderer*',
                '**/electron/**',
                '**/renderer/**',
              ],
              message:
                'shared/ is pure: no Node, DOM or Electron, and nothing outside shared/ (DESIGN.md layer rule).',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'window', 'document', 'process', 'Buffer', 'require'],
    },
  },
  {
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [...nodeBuiltins, 'electron', '**/electron/**'],
              message:
                'renderer/ talks to the core only through window.labstation (DESIGN.md layer rule).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['electron/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'electron', message: 'electron/core runs in plain Node: no electron import.' },
          ],
        },
      ],
      'no-console': 'error',
    },
  },
  {
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly' },
    },
  },
  {
    files: ['electron/preload.cts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: [
      'eslint.config.js',
      '*.config.ts',
      'renderer/vite.config.ts',
      'test/e2e/playwright.config.ts',
    ],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
