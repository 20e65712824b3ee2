import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, secretValues } from "../../core/config/load.js";
import { configSchema, listenHost } from "../../core/config/schema.js";
import { ConfigError } from "../../core/errors.js";

describe("loadConfig", () => {
  it("gives the documented defaults with no environment at all", () => {
    const c = loadConfig({});
    // HOST unset: Familiar listens on loopback (every interface once LOCAL_CHAT_ALLOW_REMOTE is on; issue 19).
    expect(c.HOST).toBeUndefined();
    expect(listenHost(c)).toBe("127.0.0.1");
    expect(c).toMatchObject({
      DATA_DIR: "./data",
      PORT: 3000,
      OPENAI_MODEL: "gpt-4o-mini",
      LOG_LEVEL: "info",
      CONTEXT_TOKEN_BUDGET: 16_000,
      LOCAL_CHAT_ALLOW_REMOTE: false,
    });
    expect(c.MONGODB_URI).toBeUndefined();
    expect(c.OPENAI_API_KEY).toBeUndefined();
  });

  it("lists every bad key in one error and never echoes a secret value", () => {
    const secret = "postgres://admin:hunter2-very-secret@db.example.com/x";
    let error: unknown;
    try {
      loadConfig({ PORT: "70000", LOG_LEVEL: "loud", MONGODB_URI: secret, OPENAI_BASE_URL: "ftp://x", LOCAL_CHAT_ALLOW_REMOTE: "maybe" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const e = error as ConfigError;
    expect(e.issues.map((i) => i.key).sort()).toEqual(["LOCAL_CHAT_ALLOW_REMOTE", "LOG_LEVEL", "MONGODB_URI", "OPENAI_BASE_URL", "PORT"]);
    expect(e.message).toContain("PORT: expected an integer port 0–65535");
    expect(e.message).not.toContain("hunter2");
    expect(e.message).not.toContain("db.example.com");
  });

  it("reads a JSON config file, with the environment winning", () => {
    const dir = mkdtempSync(join(tmpdir(), "familiar-config-"));
    const file = join(dir, "config.json");
    writeFileSync(file, JSON.stringify({ PORT: 4000, OPENAI_MODEL: "from-file", LOG_LEVEL: "debug" }));
    const c = loadConfig({ FAMILIAR_CONFIG: file, OPENAI_MODEL: "from-env" });
    expect(c.PORT).toBe(4000);
    expect(c.LOG_LEVEL).toBe("debug");
    expect(c.OPENAI_MODEL).toBe("from-env");
  });

  it("rejects an unreadable config file with a clear message", () => {
    expect(() => loadConfig({ FAMILIAR_CONFIG: "/nonexistent/familiar.json" })).toThrow(/FAMILIAR_CONFIG: cannot read/);
  });

  it("knows which values are secrets", () => {
    const c = loadConfig({ OPENAI_API_KEY: "sk-test-1234567890", MONGODB_URI: "mongodb://u:p@h/db" });
    expect(secretValues(c)).toEqual(expect.arrayContaining(["sk-test-1234567890", "mongodb://u:p@h/db"]));
  });

  it("is documented: the README's settings table names every setting", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    for (const key of Object.keys(configSchema.shape)) expect(readme).toContain(`| \`${key}\` |`);
  });
});

describe("loadConfig, more ways to get it wrong", () => {
  it("lists contradictions together with single bad values", () => {
    let error: ConfigError | null = null;
    try {
      loadConfig({ PORT: "abc", SLACK_BOT_TOKEN: "xoxb-123", TELEGRAM_WEBHOOK_URL: "https://x.example/hook" });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error!.issues.map((i) => i.key).sort()).toEqual(["PORT", "SLACK_SIGNING_SECRET", "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"]);
    expect(error!.message).toContain("SLACK_SIGNING_SECRET: expected SLACK_SIGNING_SECRET (HTTP events) or SLACK_APP_TOKEN (Socket Mode)");
  });

  it("rejects a host that is neither an address nor a host name, and accepts ones that are", () => {
    expect(() => loadConfig({ HOST: "not_a_host" })).toThrow(/HOST: expected an IP address or host name/);
    for (const host of ["0.0.0.0", "::1", "localhost", "familiar.lan"]) expect(loadConfig({ HOST: host }).HOST).toBe(host);
  });

  it("rejects unknown settings in the config file instead of ignoring a typo", () => {
    const dir = mkdtempSync(join(tmpdir(), "familiar-config-"));
    const file = join(dir, "config.json");
    writeFileSync(file, JSON.stringify({ PROT: 4000 }));
    expect(() => loadConfig({ FAMILIAR_CONFIG: file })).toThrow(/unknown settings: PROT/);
  });
});

describe("webhook secrets", () => {
  it("a short or low-entropy webhook or signing secret stops the start with a clear message", () => {
    const base = { TELEGRAM_BOT_TOKEN: "123:abcDEF", TELEGRAM_WEBHOOK_URL: "https://familiar.example/tg" };
    for (const weak of ["aaaaaaaaaaaaaaaa", "abcdefghijklmnop", "abababababababab", "password12345678"]) {
      expect(() => loadConfig({ ...base, TELEGRAM_WEBHOOK_SECRET: weak })).toThrow(/TELEGRAM_WEBHOOK_SECRET: expected a strong random secret/);
    }
    expect(() => loadConfig({ SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNING_SECRET: "short-secret" })).toThrow(/SLACK_SIGNING_SECRET: expected a strong random secret: it is 12 characters long/);
    expect(loadConfig({ ...base, TELEGRAM_WEBHOOK_SECRET: "Qf3_kP9xL2mZ7-vT8rWc" }).TELEGRAM_WEBHOOK_SECRET).toBe("Qf3_kP9xL2mZ7-vT8rWc");
    expect(loadConfig({ SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNING_SECRET: "8f742231b10e8888abcd99aa77cc85a5" }).SLACK_SIGNING_SECRET).toBeDefined();
  });

  it("OWNER takes channel:account entries, local chat names included", () => {
    expect(loadConfig({ OWNER: "telegram:42,local:me" }).OWNER).toEqual(["telegram:42", "local:me"]);
    expect(() => loadConfig({ OWNER: "irc:me" })).toThrow(/OWNER/);
  });
});
