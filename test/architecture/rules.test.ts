/**
 * The rules that hold the tree (issue 20), tested as configured: `.dependency-cruiser.cjs` fails on a
 * planted cycle, a deep import across rooms, an upward arrow and a core file importing the web
 * server; `eslint.config.js` puts the size limits on every product file, catches a planted long file
 * and long function, and its allow-list of files over a limit is exact (no stale entry, no unknown
 * function), so it can only shrink.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { cruise, type ICruiseResult, type IForbiddenRuleType } from "dependency-cruiser";
import { ESLint, Linter } from "eslint";
import tseslint from "typescript-eslint";
import { afterAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const require = createRequire(import.meta.url);

interface LimitsConfig {
  limits: { fileLines: number; functionLines: number };
  overLimit: { files: Record<string, number>; functions: Record<string, Record<string, number>>; routeTables: Record<string, Record<string, number>> };
}
const loadLimits = async () => (await import(pathToFileURL(join(root, "eslint.config.js")).href)) as LimitsConfig;

describe("the import-boundary rules (.dependency-cruiser.cjs)", { timeout: 120_000 }, () => {
  const config = require(join(root, ".dependency-cruiser.cjs")) as { forbidden: IForbiddenRuleType[]; options: Record<string, unknown> };
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Lays `files` out as a tree in a temp folder and cruises its `core/` and `web/` with the project's rules. */
  async function violationsOf(files: Record<string, string>): Promise<string[]> {
    const dir = mkdtempSync(join(tmpdir(), "familiar-rules-"));
    dirs.push(dir);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const tsConfig = { compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022" } };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(tsConfig));
    const { tsConfig: _projectTsConfig, ...options } = config.options;
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const roots = ["core", "web"].filter((top) => existsSync(join(dir, top)));
      const result = await cruise(roots, { ...options, validate: true, ruleSet: { forbidden: config.forbidden }, tsConfig: { fileName: "tsconfig.json" } }, undefined, { tsConfig });
      const output = result.output as ICruiseResult;
      return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
    } finally {
      process.chdir(cwd);
    }
  }

  it("passes a tree that keeps them (a room entered through its door, arrows down)", async () => {
    const violations = await violationsOf({
      "core/tools/index.ts": 'export { a } from "./a.js";\n',
      "core/tools/a.ts": "export const a = 1;\n",
      "core/model/index.ts": 'import { a } from "../tools/index.js";\nexport const m = a;\n',
    });
    expect(violations).toEqual([]);
  });

  it("fails on a planted cycle", async () => {
    const violations = await violationsOf({
      "core/tools/index.ts": 'export { a } from "./a.js";\n',
      "core/tools/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
      "core/tools/b.ts": 'import { a } from "./a.js";\nexport const b = () => a;\n',
    });
    expect(violations.some((v) => v.startsWith("no-circular: core/tools/"))).toBe(true);
  });

  it("fails on a planted deep import across rooms", async () => {
    const violations = await violationsOf({
      "core/tools/index.ts": 'export { a } from "./a.js";\n',
      "core/tools/a.ts": "export const a = 1;\n",
      "core/model/index.ts": 'import { a } from "../tools/a.js";\nexport const m = a;\n',
    });
    expect(violations).toContain("no-deep-import: core/model/index.ts -> core/tools/a.ts");
  });

  it("fails on a planted arrow from a lower layer up, and on core importing the web server", async () => {
    const violations = await violationsOf({
      "core/runtime/index.ts": "export const r = 1;\n",
      "core/model/index.ts": 'import { r } from "../runtime/index.js";\nimport { w } from "../../web/http/index.js";\nexport const m = r + w;\n',
      "web/http/index.ts": "export const w = 1;\n",
    });
    expect(violations).toContain("no-upward-import: core/model/index.ts -> core/runtime/index.ts");
    expect(violations).toContain("core-imports-core-only: core/model/index.ts -> web/http/index.ts");
  });
});

describe("the size limits (eslint.config.js)", { timeout: 120_000 }, () => {
  /** The two limit rules in force for `path` under the project's configuration. */
  async function limitRulesFor(path: string): Promise<Linter.RulesRecord> {
    const config = (await new ESLint({ cwd: root }).calculateConfigForFile(path)) as { rules: Linter.RulesRecord };
    const picked: Linter.RulesRecord = {};
    for (const name of ["max-lines", "max-lines-per-function"]) if (config.rules[name] !== undefined) picked[name] = config.rules[name];
    return picked;
  }
  /** Lints `text` as `path` with `rules` only (no type information needed): the rule ids and messages reported. */
  function lint(text: string, path: string, rules: Linter.RulesRecord) {
    const linter = new Linter({ configType: "flat" });
    return linter.verify(text, [{ files: ["**/*.ts", "**/*.tsx"], languageOptions: { parser: tseslint.parser }, rules }], { filename: join(root, path) });
  }
  const fn = (lines: number) => `export function planted(): number {\n${"  void 0;\n".repeat(lines - 3)}  return 1;\n}\n`;

  it("holds for every product file and for tests, and catches a planted long file and a long function", async () => {
    const { limits } = await loadLimits();
    for (const path of ["core/planted.ts", "bots/planted/index.ts", "web/api/planted.ts", "app/planted.ts", "main.ts", "webui/planted.tsx"]) {
      const rules = await limitRulesFor(path);
      expect(rules["max-lines"], path).toEqual([2, expect.objectContaining({ max: limits.fileLines })]);
      expect(rules["max-lines-per-function"], path).toEqual([2, expect.objectContaining({ max: limits.functionLines })]);
    }
    expect((await limitRulesFor("test/core/planted.test.ts"))["max-lines"]).toEqual([2, expect.objectContaining({ max: limits.fileLines })]);

    const rules = await limitRulesFor("core/planted.ts");
    expect(lint(fn(limits.functionLines), "core/planted.ts", rules)).toEqual([]);
    expect(lint(fn(limits.functionLines + 1), "core/planted.ts", rules).map((m) => m.ruleId)).toEqual(["max-lines-per-function"]);
    const longFile = "export const x = 1;\n".repeat(limits.fileLines + 1);
    expect(lint(longFile, "core/planted.ts", rules).map((m) => m.ruleId)).toEqual(["max-lines"]);
    expect(lint("export const x = 1;\n".repeat(limits.fileLines - 1), "core/planted.ts", rules)).toEqual([]);
  });

  it("lists exactly the files and functions over a limit: none within it, none unknown, none over its ceiling", async () => {
    const { limits, overLimit } = await loadLimits();
    const base: Linter.RulesRecord = {
      "max-lines": ["error", { max: limits.fileLines, skipBlankLines: false, skipComments: false }],
      "max-lines-per-function": ["error", { max: limits.functionLines, skipBlankLines: false, skipComments: false, IIFEs: false }],
    };
    for (const [path, ceiling] of Object.entries(overLimit.files)) {
      const lines = readFileSync(join(root, path), "utf8").split("\n").length - 1;
      expect(lines, `${path} is within ${limits.fileLines} lines: remove it from overLimit.files`).toBeGreaterThan(limits.fileLines);
      expect(lines, `${path} grew past its ceiling`).toBeLessThanOrEqual(ceiling);
    }
    const longFunctions = { ...overLimit.functions, ...overLimit.routeTables };
    for (const [path, listed] of Object.entries(longFunctions)) {
      const reported = new Map<string, number>();
      const messages = lint(readFileSync(join(root, path), "utf8"), path, { "max-lines-per-function": base["max-lines-per-function"]! });
      for (const m of messages) {
        const match = /'([^']*)' has too many lines \((\d+)\)/.exec(m.message);
        expect(match, `${path}:${m.line} ${m.message}`).not.toBeNull();
        reported.set(match![1]!, Number(match![2]));
      }
      for (const [name, ceiling] of Object.entries(listed)) {
        expect(reported.has(name), `${path}: ${name} is within ${limits.functionLines} lines (or gone): remove it from the allow-list`).toBe(true);
        expect(reported.get(name), `${path}: ${name} grew past its ceiling`).toBeLessThanOrEqual(ceiling);
      }
      expect([...reported.keys()].filter((name) => !(name in listed)), `${path}: functions over the limit that are not listed`).toEqual([]);
    }
  });
});

describe("the one outbound door (eslint.config.js)", { timeout: 120_000 }, () => {
  const planted = "export async function say(store: any, now: Date) {\n  await store.outbox.enqueueOutbound({ personId: 'p', deliveryKey: 'k', text: 'hi' }, now);\n}\n";
  async function doorMessages(path: string) {
    const config = (await new ESLint({ cwd: root }).calculateConfigForFile(path)) as { rules: Linter.RulesRecord };
    const rule = config.rules["no-restricted-syntax"];
    if (rule === undefined) return null;
    const linter = new Linter({ configType: "flat" });
    return linter.verify(planted, [{ files: ["**/*.ts"], languageOptions: { parser: tseslint.parser }, rules: { "no-restricted-syntax": rule } }], { filename: join(root, path) });
  }

  it("refuses a direct outbox write anywhere in product code but in the door and the store", async () => {
    for (const path of ["core/notify/planted.ts", "core/runtime/planted.ts", "connectors/email/planted.ts", "app/planted.ts", "web/api/planted.ts"]) {
      const messages = await doorMessages(path);
      expect(messages?.map((m) => m.ruleId), path).toEqual(["no-restricted-syntax"]);
    }
    for (const path of ["core/outbox/outbound.ts", "core/storage/sqlite/outbox.ts"]) expect(await doorMessages(path), path).toBeNull();
  });

  it("allow-lists only files that still write the outbox directly", async () => {
    const { outboxDoorAllowList } = (await import(pathToFileURL(join(root, "eslint.config.js")).href)) as { outboxDoorAllowList: string[] };
    for (const path of outboxDoorAllowList) expect(readFileSync(join(root, path), "utf8"), `${path} no longer writes the outbox: remove it from outboxDoorAllowList`).toContain("enqueueOutbound");
  });
});
