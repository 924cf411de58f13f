// Type-aware lint rules for the TypeScript sources (typescript-eslint), run by `npm test` (`npm run lint`).
import tseslint from 'typescript-eslint';
import { LAYERS, foldersAbove } from './scripts/import-layers.mjs';

/** One rule per folder of src/: imports point down the layers only (scripts/import-layers.mjs). */
const layerRules = LAYERS.flatMap((layer) =>
  layer.folders.map((folder) => ({
    files: [`src/${folder}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(\\.\\./)+(${foldersAbove(folder).join('|')})/`,
              message: `src/${folder} is in the ${layer.name} layer: it may not import a higher layer (scripts/import-layers.mjs).`,
            },
          ],
        },
      ],
    },
  })),
);

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'tools/**', 'helm/**', 'scripts/**', 'test/**/go-*/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test's test() and describe() return promises the runner awaits itself.
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] },
          ],
        },
      ],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // Async functions implementing promise-returning interfaces need no await: a throw still rejects.
      '@typescript-eslint/require-await': 'off',
      // A variable that closures read before its single assignment (set once the listener exists) stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  ...layerRules,
  {
    // Tests read response bodies as untyped JSON on purpose; the unsafe-any family stays on in src/ and bench/.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
