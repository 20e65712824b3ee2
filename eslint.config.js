// ESLint (flat config) with typescript-eslint 8's type-aware rules. `npm run lint` runs it together
// with the import-boundary checker (dependency-cruiser, .dependency-cruiser.cjs).
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "data/**", "test-artifacts/**", "test-results/**", "coverage/**", "scratch/**"] },
  {
    files: ["**/*.ts", "**/*.tsx"],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ["vitest.config.ts"] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // No silent death: a promise is awaited, or handed to a handler that deals with its failure.
      // `void promise` is not a handler (it turns a rejection into an unhandled one, and the process exits).
      "@typescript-eslint/no-floating-promises": ["error", { ignoreVoid: false }],
      "@typescript-eslint/no-misused-promises": "error",
      // Ports are implemented by async methods that may not await anything (an in-memory fake, a cached answer).
      "@typescript-eslint/require-await": "off",
      // `_name` marks a parameter a signature needs but the body does not use.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", ignoreRestSiblings: true, caughtErrors: "none" }],
    },
  },
  {
    // Tests read JSON from fakes and call platform payloads loosely typed on purpose; what matters in a
    // test is that no promise floats (a failure nobody sees).
    files: ["test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-base-to-string": "off",
      "@typescript-eslint/unbound-method": "off",
    },
  },
  {
    // The page: Preact ignores what an event handler returns, and an unhandled rejection in the browser
    // is reported by the page's console, not fatal, so `void` marks a promise deliberately left to it.
    files: ["webui/**/*.ts", "webui/**/*.tsx"],
    rules: {
      "@typescript-eslint/no-floating-promises": ["error", { ignoreVoid: true }],
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { attributes: false } }],
    },
  },
);
