import { readFileSync } from "node:fs";
import { ConfigError } from "../errors.js";
import { configSchema, contradictions, settingDocs, type Config } from "./schema.js";

/**
 * Reads and validates all settings once. Sources: the JSON object in the file named by
 * FAMILIAR_CONFIG (if set), overridden by environment variables of the same names.
 *
 * Throws ConfigError listing every bad key and what is expected — never the values themselves,
 * since some are secrets.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  const file = env.FAMILIAR_CONFIG;
  if (file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      throw new ConfigError(`FAMILIAR_CONFIG: cannot read ${file} as JSON (${(err as Error).message.split("\n")[0]})`, [
        { key: "FAMILIAR_CONFIG", expected: "a readable JSON file" },
      ]);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError(`FAMILIAR_CONFIG: ${file} must hold a JSON object`, [
        { key: "FAMILIAR_CONFIG", expected: "a JSON object of settings" },
      ]);
    }
    const known = new Set(Object.keys(configSchema.shape));
    const unknown = Object.keys(parsed).filter((k) => !known.has(k));
    if (unknown.length > 0) {
      throw new ConfigError(`FAMILIAR_CONFIG: ${file} has unknown settings: ${unknown.join(", ")} (see the README's settings table)`, unknown.map((key) => ({ key, expected: "a known setting name" })));
    }
    Object.assign(raw, parsed);
  }
  for (const key of Object.keys(configSchema.shape)) {
    if (env[key] !== undefined) raw[key] = env[key];
  }
  const result = configSchema.safeParse(raw);
  if (result.success) return result.data;

  const issues = new Map<string, string>();
  for (const issue of result.error.issues) {
    const key = String(issue.path[0] ?? "config");
    const doc = settingDocs[key as keyof Config];
    issues.set(key, issue.code === "custom" && issue.message ? issue.message : (doc?.expected ?? issue.message));
  }
  // zod skips the cross-setting checks while any single setting is invalid: run them on the raw values.
  for (const c of contradictions(raw)) if (!issues.has(c.key)) issues.set(c.key, c.expected);
  const list = [...issues].map(([key, expected]) => ({ key, expected }));
  const lines = list.map((i) => `  - ${i.key}: expected ${i.expected}`);
  throw new ConfigError(`Invalid settings (${list.length}):\n${lines.join("\n")}`, list);
}

/** Values of settings marked secret, and the passwords written into `connections`, for redaction by value in logs. */
export function secretValues(config: Config): string[] {
  const passwords = config.connections.map((c) => c.password).filter((p): p is string => p !== undefined && !p.startsWith("env:"));
  return [
    ...(Object.keys(settingDocs) as (keyof Config)[])
      .filter((k) => settingDocs[k].secret)
      .map((k) => config[k])
      .filter((v): v is string => typeof v === "string"),
    ...passwords,
  ].filter((v) => v.length >= 6);
}
