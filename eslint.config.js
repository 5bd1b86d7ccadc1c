// Lint configuration: typescript-eslint recommended rules over the whole repo.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules', 'dist', 'dev-dist', 'public', 'test-results'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node, ...globals.worker } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      // Dexie follows an async transaction scope through every await; a plain function returning
      // a promise loses the transaction two async levels down (docs/design.md, "Data model").
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.property.name='transaction'] > :matches(ArrowFunctionExpression, FunctionExpression)[async=false]",
          message: 'A transaction scope must be an async function (docs/design.md, "Data model").',
        },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Layers (docs/design.md, "Architecture"): the engine, the model connectors, the chat loop
    // and sync have no DOM and never reach for the UI; Lit components live in src/ui.
    files: [
      'src/memory/**/*.ts',
      'src/sync/**/*.ts',
      'src/llm/**/*.ts',
      'src/chat/**/*.ts',
      'src/embeddings/**/*.ts',
      'workers/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/ui/*', '**/ui'], message: 'Only src/ui (and the app) import the UI.' },
            { group: ['lit', 'lit/*'], message: 'Lit components belong in src/ui.' },
          ],
        },
      ],
    },
  },
);
